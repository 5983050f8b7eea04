-- The event store: one append-only table of every event of every stream.
-- data and metadata are `json`, which keeps the text exactly as written (jsonb would
-- reorder keys), so the hash chain can be recomputed from the stored bytes.

CREATE TABLE events (
    global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx_id           xid8        NOT NULL DEFAULT pg_current_xact_id(),
    stream_id       text        NOT NULL,
    stream_version  integer     NOT NULL CHECK (stream_version >= 1),
    event_id        uuid        NOT NULL,
    type            text        NOT NULL,
    schema_version  integer     NOT NULL CHECK (schema_version >= 1),
    data            json        NOT NULL,
    metadata        json        NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    hash            bytea       NOT NULL CHECK (octet_length(hash) = 32),
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    -- serves stream reads, the current version and the hash chain's previous link
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version)
);

-- the feed: rows below the snapshot's xmin, in (tx_id, global_position) order
CREATE INDEX events_feed_idx ON events (tx_id, global_position);

-- Events are immutable for everyone, owner included. A superuser can still disable the
-- trigger (ALTER TABLE ... DISABLE TRIGGER, session_replication_role), which is what the
-- hash chain is there to catch.
CREATE FUNCTION fairway_events_immutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING
        ERRCODE = 'FW003',
        MESSAGE = format('events are immutable: %s on %s is not allowed', TG_OP, TG_TABLE_NAME);
END
$$;

CREATE TRIGGER events_immutable
    BEFORE UPDATE OR DELETE OR TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION fairway_events_immutable();
