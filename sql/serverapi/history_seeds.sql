-- The next 200 accounts (by user id, after :'after') to fetch a history for, each with its seed:
-- an account whose uploads a run since the last finished one verified, seeded with the newest
-- transaction of this app they carried, and an account whose history an earlier run could not
-- get, with the seed it had then.
-- Reads:  reconcile.transaction_claims, reconcile.upload_verifications, reconcile.apple_transactions,
--         reconcile.history_lookups
-- Writes: nothing.
-- Apple's transactions only (store app_store): the Server API knows nothing of Google Play's.
-- Values: :'resumes_after' (bigint: the last finished run), :'bundle_ids' (text[]),
--         :'after' (text: the last user id of the previous page, '' at first).
WITH fresh AS (
    SELECT DISTINCT ON (c.user_id) c.user_id, c.transaction_id, c.upload_id
      FROM reconcile.transaction_claims c
      JOIN reconcile.upload_verifications v ON v.upload_id = c.upload_id
      JOIN reconcile.apple_transactions a ON a.transaction_id = c.transaction_id
     WHERE v.last_run_id > :'resumes_after'::bigint AND v.state = 'verified'
       AND a.store = 'app_store' AND a.bundle_id = ANY(:'bundle_ids'::text[])
       AND c.source <> 'server_api' AND c.user_id > :'after'::text
     ORDER BY c.user_id, a.purchase_date DESC
)
SELECT user_id, transaction_id, upload_id FROM fresh
UNION ALL
SELECT p.user_id, p.transaction_id, p.upload_id FROM reconcile.history_lookups p
 WHERE p.result = 'retry' AND p.user_id > :'after'::text
   AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.user_id = p.user_id)
 ORDER BY 1
 LIMIT 200;
