-- fairway_app: the rights the service needs and no more. NOLOGIN: grant it to the login
-- role the service connects as (GRANT fairway_app TO fairway_service). It may read and
-- append events, never change or remove them (the trigger stops everyone else too).
-- The service calls fairway_append (SECURITY INVOKER), so these rights are all it uses.
-- Roles are cluster-wide: the role is created once and shared by every database.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fairway_app') THEN
        CREATE ROLE fairway_app NOLOGIN;  -- needs CREATEROLE; or create it beforehand
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN NULL;  -- created meanwhile elsewhere
END
$$;

DO $$
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO fairway_app', current_schema());
END
$$;
REVOKE ALL ON events FROM PUBLIC;
REVOKE ALL ON events FROM fairway_app;
GRANT SELECT ON events TO fairway_app;
-- INSERT of the written columns only: global_position, tx_id and recorded_at always take
-- their defaults, so no writer can place a row elsewhere in the feed.
GRANT INSERT (stream_id, stream_version, event_id, type, schema_version, data, metadata, hash)
    ON events TO fairway_app;
GRANT SELECT ON schema_migrations TO fairway_app;
REVOKE ALL ON FUNCTION fairway_append(text, integer, uuid[], text[], integer[], text[], text[]),
    fairway_append(text, integer, uuid, text, integer, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairway_append(text, integer, uuid[], text[], integer[], text[], text[]),
    fairway_append(text, integer, uuid, text, integer, text, text) TO fairway_app;
