-- The application role appends only through fairway_append, never by a direct INSERT: a
-- row it wrote itself (with any hash it liked) was served as if the store had chained it.
--
-- * fairway_append (both overloads) becomes SECURITY DEFINER: it runs with the rights of
--   its owner, the role running this migration, which owns the table. Its search_path is
--   pinned to pg_catalog, this schema and pg_temp last (pg_temp first, the default, would
--   let a caller's temporary table named `events` stand in for ours).
-- * fairway_app loses INSERT on events (the column grants of 0003 go with it); it keeps
--   SELECT, and EXECUTE on the functions.
-- * The functions also return each row's stored hash (also on the idempotent path), so the
--   caller knows the head of the chain it extended without reading it back.
--
-- Everything else is 0002's function as it was: the advisory lock first, the version check
-- before any sequence value is drawn, errors FW001/FW002/FW004, the idempotent replay.
-- A changed return type needs DROP + CREATE (dropping takes the grants with it).

DROP FUNCTION fairway_append(text, integer, uuid, text, integer, text, text);
DROP FUNCTION fairway_append(text, integer, uuid[], text[], integer[], text[], text[]);

CREATE FUNCTION fairway_append(
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
    n         integer := cardinality(p_event_ids);
    v_current integer;
    v_prev    bytea;
    v_hashes  bytea[];
    v_found   integer;
    v_same    boolean;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_stream_id, 0));

    IF p_stream_id !~ '^[a-z][a-z0-9-]{0,62}(:[A-Za-z0-9_-]{1,64})?$' THEN
        RAISE EXCEPTION USING ERRCODE = 'FW004', MESSAGE = 'invalid stream id';
    END IF;
    IF n IS NULL OR n = 0
        OR cardinality(p_types) <> n OR cardinality(p_schema_versions) <> n
        OR cardinality(p_data) <> n OR cardinality(p_metadata) <> n THEN
        RAISE EXCEPTION USING ERRCODE = 'FW004', MESSAGE = 'event arrays differ in length';
    END IF;

    SELECT e.stream_version, e.hash INTO v_current, v_prev
      FROM events e
     WHERE e.stream_id = p_stream_id
     ORDER BY e.stream_version DESC
     LIMIT 1;
    IF NOT FOUND THEN
        v_current := 0;
        v_prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
    END IF;

    IF v_current <> p_expected_version THEN
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
        ELSIF v_found = n AND v_same THEN
            RETURN QUERY
                SELECT e.stream_version, e.global_position, e.hash
                  FROM events e
                 WHERE e.event_id = ANY (p_event_ids)
                 ORDER BY e.stream_version;
            RETURN;
        ELSE
            RAISE EXCEPTION USING
                ERRCODE = 'FW002',
                MESSAGE = 'event ids already stored elsewhere or with other content';
        END IF;
    END IF;

    IF n = 1 THEN  -- the common case, without unnest and sort
        v_prev := sha256(v_prev || convert_to(
            '["' || p_stream_id || '",' || (p_expected_version + 1) || ',"'
            || p_event_ids[1] || '","' || p_types[1] || '",' || p_schema_versions[1] || ','
            || p_data[1] || ',' || p_metadata[1] || ']', 'UTF8'));
        INSERT INTO events AS e
               (stream_id, stream_version, event_id, type, schema_version, data, metadata, hash)
        VALUES (p_stream_id, p_expected_version + 1, p_event_ids[1], p_types[1],
                p_schema_versions[1], p_data[1]::json, p_metadata[1]::json, v_prev)
        RETURNING e.stream_version, e.global_position, e.hash
             INTO stream_version, global_position, hash;
        RETURN NEXT;
        RETURN;
    END IF;

    FOR i IN 1 .. n LOOP
        v_prev := sha256(v_prev || convert_to(
            '["' || p_stream_id || '",' || (p_expected_version + i) || ',"'
            || p_event_ids[i] || '","' || p_types[i] || '",' || p_schema_versions[i] || ','
            || p_data[i] || ',' || p_metadata[i] || ']', 'UTF8'));
        v_hashes[i] := v_prev;
    END LOOP;

    RETURN QUERY
        INSERT INTO events AS e
               (stream_id, stream_version, event_id, type, schema_version, data, metadata, hash)
        SELECT p_stream_id, p_expected_version + o.ord, o.event_id, p_types[o.ord],
               p_schema_versions[o.ord], p_data[o.ord]::json, p_metadata[o.ord]::json,
               v_hashes[o.ord]
          FROM unnest(p_event_ids) WITH ORDINALITY AS o(event_id, ord)
         ORDER BY o.ord
        RETURNING e.stream_version, e.global_position, e.hash;
END
$$;

-- One event (the common case) without arrays: cheaper for the client to send.
CREATE FUNCTION fairway_append(
    p_stream_id        text,
    p_expected_version integer,
    p_event_id         uuid,
    p_type             text,
    p_schema_version   integer,
    p_data             text,
    p_metadata         text
) RETURNS TABLE (stream_version integer, global_position bigint, hash bytea)
LANGUAGE sql VOLATILE SECURITY DEFINER AS $$
    SELECT * FROM fairway_append(p_stream_id, p_expected_version, ARRAY[p_event_id],
                                 ARRAY[p_type], ARRAY[p_schema_version], ARRAY[p_data],
                                 ARRAY[p_metadata])
$$;

-- The schema this migration runs in is pinned by name (CREATE FUNCTION ... SET takes only
-- constants, hence format()). The pin only protects if fairway_app cannot create objects
-- there (an operator of its own in this schema would be chosen over a built-in that needs
-- a cast): refuse to go on when it can.
DO $$
DECLARE
    v_schema text := current_schema();
BEGIN
    IF v_schema IS NULL THEN
        RAISE EXCEPTION 'fairway_append: no current schema to pin';
    END IF;
    EXECUTE format(
        'ALTER FUNCTION %1$I.fairway_append(text, integer, uuid[], text[], integer[], text[],'
        ' text[]) SET search_path = pg_catalog, %1$I, pg_temp', v_schema);
    EXECUTE format(
        'ALTER FUNCTION %1$I.fairway_append(text, integer, uuid, text, integer, text, text)'
        ' SET search_path = pg_catalog, %1$I, pg_temp', v_schema);
    EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM fairway_app', v_schema);
    IF has_schema_privilege('fairway_app', v_schema, 'CREATE') THEN
        RAISE EXCEPTION USING
            MESSAGE = format('fairway_app may create objects in schema %s', v_schema),
            HINT = format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC (the default since'
                          ' PostgreSQL 15), then migrate again', v_schema);
    END IF;
END
$$;

REVOKE INSERT ON events FROM fairway_app;
REVOKE ALL ON FUNCTION fairway_append(text, integer, uuid[], text[], integer[], text[], text[]),
    fairway_append(text, integer, uuid, text, integer, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairway_append(text, integer, uuid[], text[], integer[], text[], text[]),
    fairway_append(text, integer, uuid, text, integer, text, text) TO fairway_app;
