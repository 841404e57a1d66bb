-- The newest verified transaction of this app the account's uploads carried that no history
-- fetched for it covers: the seed of its next history.
-- Reads:  reconcile.transaction_claims, reconcile.upload_verifications, reconcile.apple_transactions
-- Writes: nothing.
-- Apple's transactions only (store app_store): the Server API knows nothing of Google Play's.
-- Values: :'user_id' (text), :'bundle_ids' (text[]), :'covered' (text[]: the transactions the
--         account's histories listed so far).
SELECT c.transaction_id
  FROM reconcile.transaction_claims c
  JOIN reconcile.upload_verifications v ON v.upload_id = c.upload_id
  JOIN reconcile.apple_transactions a ON a.transaction_id = c.transaction_id
 WHERE c.user_id = :'user_id'::text AND v.state = 'verified' AND a.store = 'app_store' AND a.bundle_id = ANY(:'bundle_ids'::text[])
   AND c.source <> 'server_api' AND NOT (c.transaction_id = ANY(:'covered'::text[]))
 ORDER BY a.purchase_date DESC, c.transaction_id
 LIMIT 1;
