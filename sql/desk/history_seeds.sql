-- The verified transactions of this app an account's uploads carried, each with the first
-- upload that carried it: the seeds of the account's Get Transaction History calls.
-- Reads:  reconcile.transaction_claims, reconcile.apple_transactions
-- Writes: nothing.
-- Apple's transactions only (store app_store): the Server API knows nothing of Google Play's.
-- Values: :'user_id' (text), :'bundle_ids' (text[]).
SELECT DISTINCT ON (c.transaction_id) c.transaction_id, c.upload_id
  FROM reconcile.transaction_claims c
  JOIN reconcile.apple_transactions a ON a.transaction_id = c.transaction_id
 WHERE c.user_id = :'user_id'::text AND c.source <> 'server_api' AND a.store = 'app_store' AND a.bundle_id = ANY(:'bundle_ids'::text[])
 ORDER BY c.transaction_id, c.upload_id;
