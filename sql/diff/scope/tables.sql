-- Stage: scope tables — declared once per connection, empty at every transaction's start; one of
--        the scope stages below fills them.
-- Reads:  nothing.
-- Writes: diff_scope (transaction_id) — the transactions this diff judges exactly;
--         diff_scope_uploads (upload_id) — the uploads the foreign_bundle rule looks at (no key:
--         an upload two scope stages add is there twice, and the rule reads it with IN).
-- Values: none.
--
-- Transaction ids come from the app's ledger and can be of any length: the key is unique on
-- their digest (migrations/0010_long_identifiers.sql), not on the text a btree cannot hold.
CREATE TEMP TABLE IF NOT EXISTS diff_scope (transaction_id text NOT NULL) ON COMMIT DELETE ROWS;
CREATE UNIQUE INDEX IF NOT EXISTS diff_scope_digest ON diff_scope (reconcile.text_digest(transaction_id));

CREATE TEMP TABLE IF NOT EXISTS diff_scope_uploads (upload_id bigint NOT NULL) ON COMMIT DELETE ROWS;
