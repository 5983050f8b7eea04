-- Group commit: several appends, each to its own stream at its own expected version, in one
-- statement (so one round trip and one commit; events/store/postgres_group.py).
--
-- * Each append is one call of fairway_append, unchanged: the app role still appends only
--   through it. This function runs as its caller (SECURITY INVOKER), so it can do nothing the
--   caller could not do by calling fairway_append itself.
-- * Each append runs in a block with an exception handler (a subtransaction): one that fails
--   (a version conflict, event ids stored elsewhere, data the database refuses) is rolled back
--   alone and reported in its row; the others commit. Errors no handler may catch (a
--   statement timeout, a cancel, a lost connection) end the whole statement: nothing commits.
-- * Appends run in the order given; the caller puts appends to one stream in their order and
--   sorts the batch by stream id, so that batches of several writers take the streams'
--   advisory locks in one order and cannot deadlock.
-- * One row per event appended (append_no: the append's place in the batch, from 1), or one
--   row for an append that failed, with its SQLSTATE, message, detail and constraint name.
--   Keep batches at 64 appends or fewer: a transaction with more subtransaction ids than
--   PostgreSQL caches per backend (64) slows every snapshot in the cluster.

CREATE FUNCTION fairway_append_batch(
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
BEGIN
    IF cardinality(p_expected_versions) <> m OR cardinality(p_counts) <> m THEN
        RAISE EXCEPTION USING ERRCODE = 'FW004', MESSAGE = 'append arrays differ in length';
    END IF;
    FOR i IN 1 .. m LOOP
        v_first := v_last + 1;
        v_last := v_last + p_counts[i];
        BEGIN
            -- fairway_append returns its rows whole (a set-returning plpgsql function), so
            -- a failing append adds no row here before its error
            RETURN QUERY
                SELECT i, a.stream_version, a.global_position, a.hash,
                       NULL::text, NULL::text, NULL::text, NULL::text
                  FROM fairway_append(p_stream_ids[i], p_expected_versions[i],
                                      p_event_ids[v_first:v_last], p_types[v_first:v_last],
                                      p_schema_versions[v_first:v_last],
                                      p_data[v_first:v_last], p_metadata[v_first:v_last]) AS a;
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

DO $$
BEGIN
    EXECUTE format(
        'ALTER FUNCTION %1$I.fairway_append_batch(text[], integer[], integer[], uuid[], text[],'
        ' integer[], text[], text[]) SET search_path = pg_catalog, %1$I, pg_temp',
        current_schema());
END
$$;

REVOKE ALL ON FUNCTION fairway_append_batch(text[], integer[], integer[], uuid[], text[],
    integer[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairway_append_batch(text[], integer[], integer[], uuid[], text[],
    integer[], text[], text[]) TO fairway_app;
