-- A cheaper fairway_append (issue 19, lever 6), with every guarantee of 0004 kept: the app
-- role appends only through it (SECURITY DEFINER, search_path pinned, no INSERT grant), the
-- stream's advisory lock first, the version check before any sequence value is drawn, errors
-- FW001 (detail: the actual version), FW002 and FW004, the idempotent replay, and the chain:
-- each row's hash is SHA-256 of the previous hash and the row's canonical bytes, exactly as
-- before (events/codec.py canonical_bytes), so rows stored before and after chain alike.
--
-- Where the time went, per append of one event (backend CPU, measured):
-- * the stream id's pattern: its bounded repeats ({0,62}, {1,64}) made PostgreSQL's regex
--   engine spend 10-20 us on every call. Now an unbounded pattern (under 1 us) and the two
--   lengths checked apart: the same ids pass (tests/integration/events/test_cheaper_append.py);
-- * the one-event overload was an SQL wrapper over the array one: SECURITY DEFINER keeps it
--   from being inlined, so it was parsed and planned on every call. Now it is plpgsql (its
--   plans are kept per session) and does the work itself;
-- * three statements (lock, read the head, insert) and a chain computed in plpgsql. Now two:
--   the lock, then one INSERT ... SELECT that reads the head, checks the expected version in
--   its WHERE and computes the chain in SQL (a recursive CTE for several events). It inserts
--   nothing when the version is not the expected one; only then is the head read again, by
--   fairway_append_replay: the idempotent path or the errors, as 0004 had them.
--
-- The lock must stay a statement of its own: a statement's snapshot is taken when it starts,
-- so the INSERT that follows the lock sees every append that held it before.

-- The chain's link: the hash of a row after `p_prev`. One definition for every statement
-- below; a plain SQL expression, which the planner inlines where it is used.
CREATE FUNCTION fairway_chain_link(
    p_prev bytea, p_stream_id text, p_version integer, p_event_id uuid, p_type text,
    p_schema_version integer, p_data text, p_metadata text
) RETURNS bytea
LANGUAGE sql STABLE AS $$
    SELECT sha256(p_prev || convert_to(
        '["' || p_stream_id || '",' || p_version || ',"' || p_event_id || '","' || p_type
        || '",' || p_schema_version || ',' || p_data || ',' || p_metadata || ']', 'UTF8'))
$$;

-- STREAM_ID_PATTERN of events/store/base.py, ^[a-z][a-z0-9-]{0,62}(:[A-Za-z0-9_-]{1,64})?$:
-- the pattern allows one colon at most, so split_part gives the two parts to measure.
CREATE FUNCTION fairway_valid_stream_id(p_stream_id text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_stream_id ~ '^[a-z][a-z0-9-]*(:[A-Za-z0-9_-]+)?$'
       AND octet_length(split_part(p_stream_id, ':', 1)) <= 63
       AND octet_length(split_part(p_stream_id, ':', 2)) <= 64
$$;

-- The stream is not at the expected version (the caller holds its lock and inserted
-- nothing): a retry of an append that succeeded gets its stored rows back (these event ids
-- stored right after the expected version with the same type, schema version and data);
-- anything else is FW001 (detail: the actual version) or FW002 (the ids stored elsewhere or
-- with other content). 0004's code for this path, moved here.
CREATE FUNCTION fairway_append_replay(
    p_stream_id        text,
    p_expected_version integer,
    p_event_ids        uuid[],
    p_types            text[],
    p_schema_versions  integer[],
    p_data             text[]
) RETURNS TABLE (stream_version integer, global_position bigint, hash bytea)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    v_current integer;
    v_found   integer;
    v_same    boolean;
BEGIN
    SELECT coalesce(max(e.stream_version), 0) INTO v_current
      FROM events e
     WHERE e.stream_id = p_stream_id;
    SELECT count(*),
           coalesce(bool_and(e.stream_id = p_stream_id
                             AND e.stream_version = p_expected_version + o.ord
                             AND e.type = p_types[o.ord]
                             AND e.schema_version = p_schema_versions[o.ord]
                             AND e.data::text = p_data[o.ord]), false)
      INTO v_found, v_same
      FROM unnest(p_event_ids) WITH ORDINALITY AS o(event_id, ord)
      JOIN events e ON e.event_id = o.event_id;
    IF v_found = 0 THEN
        RAISE EXCEPTION USING
            ERRCODE = 'FW001',
            MESSAGE = format('stream %s is at version %s, not %s',
                             p_stream_id, v_current, p_expected_version),
            DETAIL = v_current::text;
    ELSIF v_found = cardinality(p_event_ids) AND v_same THEN
        RETURN QUERY
            SELECT e.stream_version, e.global_position, e.hash
              FROM events e
             WHERE e.event_id = ANY (p_event_ids)
             ORDER BY e.stream_version;
    ELSE
        RAISE EXCEPTION USING
            ERRCODE = 'FW002',
            MESSAGE = 'event ids already stored elsewhere or with other content';
    END IF;
END
$$;

-- One event (the common case): the client sends no arrays (they cost it more to encode).
CREATE OR REPLACE FUNCTION fairway_append(
    p_stream_id        text,
    p_expected_version integer,
    p_event_id         uuid,
    p_type             text,
    p_schema_version   integer,
    p_data             text,
    p_metadata         text
) RETURNS TABLE (stream_version integer, global_position bigint, hash bytea)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
#variable_conflict use_column
DECLARE
    v_genesis constant bytea := '\x0000000000000000000000000000000000000000000000000000000000000000';
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_stream_id, 0));
    IF NOT fairway_valid_stream_id(p_stream_id) THEN
        RAISE EXCEPTION USING ERRCODE = 'FW004', MESSAGE = 'invalid stream id';
    END IF;

    RETURN QUERY
        INSERT INTO events AS e
               (stream_id, stream_version, event_id, type, schema_version, data, metadata, hash)
        SELECT p_stream_id, p_expected_version + 1, p_event_id, p_type, p_schema_version,
               one.data::json, one.metadata::json,
               fairway_chain_link(coalesce(head.hash, v_genesis),
                                  p_stream_id, p_expected_version + 1, p_event_id, p_type,
                                  p_schema_version, p_data, p_metadata)
          -- the casts take a row's columns, not the parameters, whose casts would be folded
          -- when the statement is planned: a JSON error ahead of the version check (OFFSET
          -- 0 keeps the planner from pulling the row's values up into the casts)
          FROM (SELECT p_data, p_metadata OFFSET 0) AS one (data, metadata)
          LEFT JOIN LATERAL (SELECT h.stream_version, h.hash
                               FROM events h
                              WHERE h.stream_id = p_stream_id
                              ORDER BY h.stream_version DESC
                              LIMIT 1) AS head ON true
         WHERE coalesce(head.stream_version, 0) = p_expected_version
        RETURNING e.stream_version, e.global_position, e.hash;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT * FROM fairway_append_replay(p_stream_id, p_expected_version,
                                                ARRAY[p_event_id], ARRAY[p_type],
                                                ARRAY[p_schema_version], ARRAY[p_data]);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION fairway_append(
    p_stream_id        text,
    p_expected_version integer,
    p_event_ids        uuid[],
    p_types            text[],
    p_schema_versions  integer[],
    p_data             text[],
    p_metadata         text[]
) RETURNS TABLE (stream_version integer, global_position bigint, hash bytea)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
#variable_conflict use_column
DECLARE
    n integer := cardinality(p_event_ids);
    v_genesis constant bytea := '\x0000000000000000000000000000000000000000000000000000000000000000';
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_stream_id, 0));
    IF NOT fairway_valid_stream_id(p_stream_id) THEN
        RAISE EXCEPTION USING ERRCODE = 'FW004', MESSAGE = 'invalid stream id';
    END IF;
    IF n IS NULL OR n = 0
        OR cardinality(p_types) <> n OR cardinality(p_schema_versions) <> n
        OR cardinality(p_data) <> n OR cardinality(p_metadata) <> n THEN
        RAISE EXCEPTION USING ERRCODE = 'FW004', MESSAGE = 'event arrays differ in length';
    END IF;

    -- chain(i, link): link is the hash of the stream's row expected + i; i = 0 is the head
    -- (none when the stream is not at the expected version: then nothing is inserted)
    RETURN QUERY
        WITH RECURSIVE chain (i, link) AS (
            SELECT 0, coalesce(head.hash, v_genesis)
              FROM (VALUES (1)) AS one (x)
              LEFT JOIN LATERAL (SELECT h.stream_version, h.hash
                                   FROM events h
                                  WHERE h.stream_id = p_stream_id
                                  ORDER BY h.stream_version DESC
                                  LIMIT 1) AS head ON true
             WHERE coalesce(head.stream_version, 0) = p_expected_version
            UNION ALL
            SELECT c.i + 1,
                   fairway_chain_link(c.link, p_stream_id, p_expected_version + c.i + 1,
                                      p_event_ids[c.i + 1], p_types[c.i + 1],
                                      p_schema_versions[c.i + 1], p_data[c.i + 1],
                                      p_metadata[c.i + 1])
              FROM chain c
             WHERE c.i < n
        )
        INSERT INTO events AS e
               (stream_id, stream_version, event_id, type, schema_version, data, metadata, hash)
        SELECT p_stream_id, p_expected_version + c.i, p_event_ids[c.i], p_types[c.i],
               p_schema_versions[c.i], p_data[c.i]::json, p_metadata[c.i]::json, c.link
          FROM chain c
         WHERE c.i > 0
         ORDER BY c.i
        RETURNING e.stream_version, e.global_position, e.hash;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT * FROM fairway_append_replay(p_stream_id, p_expected_version, p_event_ids,
                                                p_types, p_schema_versions, p_data);
    END IF;
END
$$;

-- fairway_append_together: 0007's fairway_append_batch (same arguments, same rows) with two
-- changes. The store calls it instead; fairway_append_batch stays as it was for a service of
-- the previous release, running during a rolling deploy, which knows nothing of FW005 (drop
-- it in a later migration).
-- * It never waits for a stream's lock. An append whose stream another transaction holds
--   (and every later append of that stream in the batch, which must follow it) is reported
--   busy, FW005, untried; the store then sends it alone (events/store/postgres_group.py).
--   fairway_append_batch waits behind it, and when the wait outlasts the statement timeout
--   every append in the batch fails, where alone only that one would have. Waiting for no
--   advisory lock, batches cannot deadlock one another on them, whatever their order.
-- * An append of one event calls the one-event overload: no array slices, no recursion.
CREATE FUNCTION fairway_append_together(
    p_stream_ids        text[],
    p_expected_versions integer[],
    p_counts            integer[],
    p_event_ids         uuid[],
    p_types             text[],
    p_schema_versions   integer[],
    p_data              text[],
    p_metadata          text[]
) RETURNS TABLE (append_no integer, stream_version integer, global_position bigint,
                 hash bytea, error_state text, error_message text, error_detail text,
                 error_constraint text)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
#variable_conflict use_column
DECLARE
    m          integer := coalesce(cardinality(p_stream_ids), 0);
    v_first    integer;
    v_last     integer := 0;
    v_state    text;
    v_message  text;
    v_detail   text;
    v_constraint text;
    v_busy     text[] := '{}';
BEGIN
    IF cardinality(p_expected_versions) <> m OR cardinality(p_counts) <> m THEN
        RAISE EXCEPTION USING ERRCODE = 'FW004', MESSAGE = 'append arrays differ in length';
    END IF;
    FOR i IN 1 .. m LOOP
        v_first := v_last + 1;
        v_last := v_last + p_counts[i];
        IF p_stream_ids[i] = ANY (v_busy)
            OR NOT pg_try_advisory_xact_lock(hashtextextended(p_stream_ids[i], 0)) THEN
            v_busy := v_busy || p_stream_ids[i];
            RETURN QUERY
                SELECT i, NULL::integer, NULL::bigint, NULL::bytea, 'FW005'::text,
                       format('stream %s is locked by another transaction', p_stream_ids[i]),
                       NULL::text, NULL::text;
            CONTINUE;
        END IF;
        BEGIN
            IF p_counts[i] = 1 THEN  -- the one-event overload: no slices, no recursion
                RETURN QUERY
                    SELECT i, a.stream_version, a.global_position, a.hash,
                           NULL::text, NULL::text, NULL::text, NULL::text
                      FROM fairway_append(p_stream_ids[i], p_expected_versions[i],
                                          p_event_ids[v_first], p_types[v_first],
                                          p_schema_versions[v_first], p_data[v_first],
                                          p_metadata[v_first]) AS a;
            ELSE
                RETURN QUERY
                    SELECT i, a.stream_version, a.global_position, a.hash,
                           NULL::text, NULL::text, NULL::text, NULL::text
                      FROM fairway_append(p_stream_ids[i], p_expected_versions[i],
                                          p_event_ids[v_first:v_last], p_types[v_first:v_last],
                                          p_schema_versions[v_first:v_last],
                                          p_data[v_first:v_last],
                                          p_metadata[v_first:v_last]) AS a;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS
                v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,
                v_detail = PG_EXCEPTION_DETAIL, v_constraint = CONSTRAINT_NAME;
            RETURN QUERY
                SELECT i, NULL::integer, NULL::bigint, NULL::bytea,
                       v_state, v_message, v_detail, v_constraint;
        END;
    END LOOP;
END
$$;

-- CREATE OR REPLACE keeps each function's owner and grants but not its settings: pin the
-- search_path again (as 0004 does, for the same reasons), the new functions' too.
DO $$
DECLARE
    v_schema text := current_schema();
    v_function text;
BEGIN
    IF v_schema IS NULL THEN
        RAISE EXCEPTION 'fairway_append: no current schema to pin';
    END IF;
    FOREACH v_function IN ARRAY ARRAY[
        'fairway_append(text, integer, uuid[], text[], integer[], text[], text[])',
        'fairway_append(text, integer, uuid, text, integer, text, text)',
        'fairway_append_replay(text, integer, uuid[], text[], integer[], text[])',
        'fairway_append_together(text[], integer[], integer[], uuid[], text[], integer[],'
            ' text[], text[])'
    ] LOOP
        EXECUTE format('ALTER FUNCTION %1$I.%2$s SET search_path = pg_catalog, %1$I, pg_temp',
                       v_schema, v_function);
    END LOOP;
    IF has_schema_privilege('fairway_app', v_schema, 'CREATE') THEN
        RAISE EXCEPTION USING
            MESSAGE = format('fairway_app may create objects in schema %s', v_schema),
            HINT = format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC, then migrate again',
                          v_schema);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION fairway_append_together(text[], integer[], integer[], uuid[], text[],
    integer[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairway_append_together(text[], integer[], integer[], uuid[], text[],
    integer[], text[], text[]) TO fairway_app;

-- The helpers are the append functions' own: the app role runs them only through those.
REVOKE ALL ON FUNCTION
    fairway_chain_link(bytea, text, integer, uuid, text, integer, text, text),
    fairway_valid_stream_id(text),
    fairway_append_replay(text, integer, uuid[], text[], integer[], text[])
    FROM PUBLIC;
