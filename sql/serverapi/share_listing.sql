-- A history is one Apple account's: every app account tied to it (other than the one it was
-- fetched for), by an upload or an earlier fetch of these transactions, is recorded as listing
-- the transactions too (ServerAPILookups.shareListing says why).
-- Reads:  reconcile.transaction_claims
-- Writes: reconcile.transaction_claims (source 'server_api')
-- Values: :'transaction_ids' (text[]: what the history listed), :'user_id' (text: the account it
--         was fetched for, null for a seed no upload carried), :'run_id' (bigint).
INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source, run_id)
SELECT t.transaction_id, o.upload_id, o.user_id, 'server_api', :'run_id'::bigint
  FROM unnest(:'transaction_ids'::text[]) AS t (transaction_id)
 CROSS JOIN (SELECT DISTINCT ON (c.user_id) c.user_id, c.upload_id
               FROM reconcile.transaction_claims c
              WHERE c.transaction_id = ANY (:'transaction_ids'::text[])
                AND c.user_id IS DISTINCT FROM :'user_id'::text
              ORDER BY c.user_id, c.upload_id) AS o
ON CONFLICT (transaction_id, upload_id) DO NOTHING;
