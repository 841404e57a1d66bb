-- The next 200 transactions (by id, after :'after') the job learnt of since the last finished
-- run, or whose history an earlier run could not get, that no upload carried and no history
-- listed: each names an Apple account whose history is fetched, seeded with it (SPEC section 5).
-- Reads:  reconcile.apple_transactions, reconcile.history_retries, reconcile.transaction_claims
-- Writes: nothing.
-- Apple's transactions only (store app_store): the Server API knows nothing of Google Play's.
-- Values: :'resumes_after' (bigint: the last finished run), :'bundle_ids' (text[]),
--         :'after' (text: the last transaction id of the previous page, '' at first).
SELECT a.transaction_id FROM reconcile.apple_transactions a
 WHERE (a.last_seen_run > :'resumes_after'::bigint
        OR a.transaction_id IN (SELECT transaction_id FROM reconcile.history_retries))
   AND a.store = 'app_store' AND a.bundle_id = ANY (:'bundle_ids'::text[]) AND a.transaction_id > :'after'::text
   AND NOT EXISTS (SELECT 1 FROM reconcile.transaction_claims c WHERE c.transaction_id = a.transaction_id)
 ORDER BY a.transaction_id
 LIMIT 200;
