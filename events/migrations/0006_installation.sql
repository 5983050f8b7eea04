-- The installation: one row naming this event store, made once, with the database. A reader
-- that keeps something built from the feed (a projection's generation) keeps this id with
-- it, and tells by it that the store it follows is no longer the one it was built from: a
-- database dropped and created again, another database at the same address. A copy of the
-- database (a dump restored, a replica promoted, a restore to an earlier point) keeps the
-- id, as it keeps the events; a reader tells a restore to an earlier point by the feed's
-- head standing behind what it has read.

CREATE TABLE installation (
    id         uuid        NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    one        boolean     NOT NULL DEFAULT true UNIQUE CHECK (one)  -- never a second row
);

INSERT INTO installation DEFAULT VALUES;

-- As immutable as the events (the same trigger function, 0001).
CREATE TRIGGER installation_immutable
    BEFORE UPDATE OR DELETE OR TRUNCATE ON installation
    FOR EACH STATEMENT EXECUTE FUNCTION fairway_events_immutable();

REVOKE ALL ON installation FROM PUBLIC;
GRANT SELECT ON installation TO fairway_app;
