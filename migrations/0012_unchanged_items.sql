-- A nightly run with nothing new costs what is new (issue 17): open review items none of whose
-- inputs changed since the last finished run keep their evidence and are not judged again.
-- Most inputs already say when they changed: Apple's transactions (last_seen_run), claims
-- (run_id), verifications (last_run_id), lookups (run_id) and the ledger (reconcile.ledger_changes,
-- migration 0009). This migration adds what was missing; sql/diff/26_scope_changed_bindings.sql
-- and docs/benchmarks.md say why skipping the rest is safe.

-- Account tokens: statement-level triggers note the tokens whose binding was written, as the
-- ledger's do (a COPY of millions of tokens stays one INSERT … SELECT). A run judges every
-- transaction bound to a token its last finished run's snapshot did not show as committed.
CREATE TABLE reconcile.token_changes (
    change_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_account_token uuid NOT NULL,
    changed_xact bigint NOT NULL
);
CREATE INDEX token_changes_changed_xact_idx ON reconcile.token_changes (changed_xact);

CREATE FUNCTION reconcile.note_token_changes() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    xact bigint := pg_current_xact_id()::text::bigint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO reconcile.token_changes (app_account_token, changed_xact)
        SELECT app_account_token, xact FROM new_rows;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO reconcile.token_changes (app_account_token, changed_xact)
        SELECT app_account_token, xact FROM new_rows UNION SELECT app_account_token, xact FROM old_rows;
    ELSE
        INSERT INTO reconcile.token_changes (app_account_token, changed_xact)
        SELECT app_account_token, xact FROM old_rows;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER account_tokens_note_inserts AFTER INSERT ON reconcile.account_tokens
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_token_changes();
CREATE TRIGGER account_tokens_note_updates AFTER UPDATE ON reconcile.account_tokens
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_token_changes();
CREATE TRIGGER account_tokens_note_deletes AFTER DELETE ON reconcile.account_tokens
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_token_changes();

-- What every item's judgement depends on beyond its own rows (the diff's SQL, the settings that
-- decide findings, the whole product catalogue): a digest taken when the diff starts. A run whose
-- digest differs from its last finished run's (or finds none) judges every open item.
ALTER TABLE reconcile.runs ADD COLUMN judged_inputs text;

-- What the report lists of a finding besides the item's columns, as the last run that detected it
-- found it (user_id stays the account of the first detection): an item carried over unchanged is
-- reported from here and its stored evidence.
ALTER TABLE reconcile.review_items
    ADD COLUMN detected_user_id text,
    ADD COLUMN amount_milli bigint,
    ADD COLUMN currency text,
    ADD COLUMN purchase_date timestamptz;
