-- receipt_keys: every public key that has signed receipts for this database's games.
-- Instances that share the database may each sign with a key of their own (one made in
-- its data directory when none is configured); each registers its key here at start, so
-- that every instance's audit accepts every instance's receipts and serves the whole list
-- at /.well-known/fairway-receipt-key. A key stays registered for good: the receipts it
-- signed stay checkable after a rotation.
--
-- fairway_app may INSERT (key_id and public_key; first_seen always takes its default) and
-- SELECT, never UPDATE or DELETE; the trigger stops everyone else too. Written to run again
-- on a database that has it already.

CREATE TABLE IF NOT EXISTS receipt_keys (
    public_key bytea       PRIMARY KEY CHECK (octet_length(public_key) = 32),
    -- a receipt names its signer so: the first 16 hex digits of SHA-256 of the key
    key_id     text        NOT NULL UNIQUE
                           CHECK (key_id = left(encode(sha256(public_key), 'hex'), 16)),
    first_seen timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION fairway_receipt_keys_kept() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING
        ERRCODE = 'FW003',
        MESSAGE = format('receipt keys are kept for good: %s on %s is not allowed',
                         TG_OP, TG_TABLE_NAME);
END
$$;

CREATE OR REPLACE TRIGGER receipt_keys_kept
    BEFORE UPDATE OR DELETE OR TRUNCATE ON receipt_keys
    FOR EACH STATEMENT EXECUTE FUNCTION fairway_receipt_keys_kept();

REVOKE ALL ON receipt_keys FROM PUBLIC;
REVOKE ALL ON receipt_keys FROM fairway_app;
GRANT SELECT ON receipt_keys TO fairway_app;
GRANT INSERT (key_id, public_key) ON receipt_keys TO fairway_app;
