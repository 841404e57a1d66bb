-- A chain of nightly runs finds what one run over the whole history finds (SPEC section 5,
-- issue 23). Three inputs reached a nightly run only through dates or through what it verified:
--
-- 1. Uploads were read by `uploaded_at`. An upload stored late with an old timestamp (an app that
--    queues uploads and stores them with the client's time, a replica lagging more than the
--    window's overlap) was never read. Statement-level triggers now note every upload as it is
--    stored, as the ledger's do (migration 0009), and the next run enqueues what they noted,
--    whatever its `uploaded_at` (VerificationQueue.enqueue). A COPY of millions of uploads stays
--    one INSERT … SELECT.
-- 2. An account becoming known (its first upload, ledger row or token row) or unknown (its last
--    one deleted) changes the buyer of every transaction whose username or token names it. The
--    ledger's and the tokens' changes now note the accounts they touch, old and new, so that the
--    next run judges every transaction bound to them (sql/diff/26_scope_changed_bindings.sql).
-- 3. The buyer rule resolves a binding against every account the job knows (uploads, ledger,
--    tokens), not only the accounts in the night's scope: the ledger and the tokens get the same
--    lookups by account and by the account's SHA-256 that the uploads have (migration 0005), and
--    the claims an index on their username, by which a newly known account finds what names it.

CREATE TABLE reconcile.upload_arrivals (
    upload_id bigint NOT NULL
);

-- The trigger's arguments, if any, name the id column of an operator's own uploads table
-- (docs/operations.md); the reference table's is id. It runs as its owner: whoever writes the
-- uploads needs no grant on reconcile.upload_arrivals. Only inserts: an upload is evidence as it
-- was stored, and one edited afterwards is not read again.
CREATE FUNCTION reconcile.note_upload_arrivals() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    EXECUTE format('INSERT INTO reconcile.upload_arrivals (upload_id) SELECT %I FROM new_rows',
                   coalesce(TG_ARGV[0], 'id'));
    RETURN NULL;
END $$;

CREATE TRIGGER receipt_uploads_note_arrivals AFTER INSERT ON reconcile.receipt_uploads
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_upload_arrivals();

-- The accounts of each ledger change: the row's account before and after.
ALTER TABLE reconcile.ledger_changes ADD COLUMN user_id text;

-- As in 0009, with the account: the trigger's first argument names the transaction id column,
-- its second the account column (user_id in the reference table).
CREATE OR REPLACE FUNCTION reconcile.note_ledger_changes() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    xact bigint := pg_current_xact_id()::text::bigint;
    id_column text := coalesce(TG_ARGV[0], 'transaction_id');
    user_column text := coalesce(TG_ARGV[1], 'user_id');
BEGIN
    -- No DISTINCT for inserts: a COPY of millions of new deliveries is written through, not
    -- sorted; the scope's UNION folds repeats. An UPDATE may move a delivery to another
    -- transaction or account: both are judged again.
    EXECUTE format(
        'INSERT INTO reconcile.ledger_changes (transaction_id, user_id, changed_xact) '
        'SELECT id, account, $1 FROM (%s) changed WHERE id IS NOT NULL',
        CASE TG_OP
            WHEN 'INSERT' THEN format('SELECT %I::text AS id, %I::text AS account FROM new_rows',
                                      id_column, user_column)
            WHEN 'UPDATE' THEN format('SELECT %1$I::text AS id, %2$I::text AS account FROM new_rows '
                                      'UNION SELECT %1$I::text, %2$I::text FROM old_rows', id_column, user_column)
            ELSE format('SELECT %I::text AS id, %I::text AS account FROM old_rows', id_column, user_column)
        END) USING xact;
    RETURN NULL;
END $$;

-- The tokens' changes alike: the accounts a token mapped to before and after.
ALTER TABLE reconcile.token_changes ADD COLUMN user_id text;

CREATE OR REPLACE FUNCTION reconcile.note_token_changes() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    xact bigint := pg_current_xact_id()::text::bigint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO reconcile.token_changes (app_account_token, user_id, changed_xact)
        SELECT app_account_token, user_id, xact FROM new_rows;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO reconcile.token_changes (app_account_token, user_id, changed_xact)
        SELECT app_account_token, user_id, xact FROM new_rows
        UNION SELECT app_account_token, user_id, xact FROM old_rows;
    ELSE
        INSERT INTO reconcile.token_changes (app_account_token, user_id, changed_xact)
        SELECT app_account_token, user_id, xact FROM old_rows;
    END IF;
    RETURN NULL;
END $$;

-- Every account the job knows, found by its SHA-256 (a username that hashes an account id).
CREATE INDEX deliveries_account_hash_idx ON reconcile.deliveries (reconcile.account_hash(user_id));
CREATE INDEX account_tokens_account_hash_idx ON reconcile.account_tokens (reconcile.account_hash(user_id));

-- What names a newly known account: a username equal to its id or to its SHA-256 (compared
-- lowercased; any length, hence hash indexes).
CREATE INDEX transaction_claims_username_idx ON reconcile.transaction_claims
    USING hash (lower(application_username)) WHERE application_username IS NOT NULL;

-- Transactions no upload carried whose history Apple could not give when it was asked
-- (ServerAPILookups.unclaimedHistories): the next run asks again, whatever it learnt.
CREATE TABLE reconcile.history_retries (
    transaction_id text NOT NULL,
    run_id bigint REFERENCES reconcile.runs (id)
);
CREATE UNIQUE INDEX history_retries_transaction_idx ON reconcile.history_retries (reconcile.text_digest(transaction_id));
