-- Stage: claims — which uploads carried each transaction in scope, and with what binding.
-- Reads:  diff_tx, reconcile.transaction_claims
-- Writes: diff_claims (one row per transaction and upload)
-- Values: none.
CREATE TEMP TABLE diff_claims ON COMMIT DROP AS
SELECT c.transaction_id, c.upload_id, c.user_id, c.application_username, c.app_account_token
  FROM reconcile.transaction_claims c JOIN diff_tx t ON t.transaction_id = c.transaction_id;

CREATE INDEX ON diff_claims (transaction_id);
ANALYZE diff_claims;
