-- Stage: claims — which uploads carried each transaction in scope, and with what binding.
-- Reads:  diff_tx, reconcile.transaction_claims
-- Writes: diff_claims (one row per transaction and upload, with the claim's source; uploaded
--         false for a transaction a customer's Server API history listed, recorded against the
--         upload whose account the history was fetched for)
-- Values: none.
--
-- SPEC section 5: only uploads carry a transaction. A history is evidence of what Apple sold,
-- never an upload by the account whose lookup fetched it: such a claim counts in no uploader count
-- and binds nothing (43_buyer.sql uses it only for a transaction no upload carried).
CREATE TEMP TABLE IF NOT EXISTS diff_claims (
    transaction_id text, upload_id bigint, user_id text, application_username text, app_account_token uuid,
    source text, uploaded boolean
) ON COMMIT DELETE ROWS;
CREATE INDEX IF NOT EXISTS diff_claims_transaction_id ON diff_claims (transaction_id);

INSERT INTO diff_claims (transaction_id, upload_id, user_id, application_username, app_account_token, source,
                         uploaded)
SELECT c.transaction_id, c.upload_id, c.user_id, c.application_username, c.app_account_token, c.source,
       c.source <> 'server_api' AS uploaded
  FROM reconcile.transaction_claims c JOIN diff_tx t ON t.transaction_id = c.transaction_id;

ANALYZE diff_claims;
