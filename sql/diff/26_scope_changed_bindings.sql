-- Stage: scope of a window run that carries unchanged open items over — what else can change a
-- finding that the other scope stages do not see.
-- Reads:  reconcile.token_changes, reconcile.apple_transactions, reconcile.transaction_claims,
--         reconcile.review_items, reconcile.upload_verifications, :uploads
-- Writes: diff_scope
-- Values: :'ledger_changes_after' (pg_snapshot: the last finished run's), :'resumes_after' (bigint).
--
-- Why carrying an open item over is safe. Its finding was detected by the last diff that judged
-- its transaction, and a finding reads only:
-- - Apple's transactions (last_seen_run), the uploads' claims (run_id), their verifications
--   (last_run_id, stamped again every run while pending or retrying) and Get Transaction Info's
--   answers (run_id): 21_scope_touched_by_run.sql judges whatever the runs since the last finished
--   one wrote;
-- - the ledger: 25_scope_ledger_changes.sql judges every change the last finished run's snapshot
--   did not show;
-- - account tokens: the triggers of migration 0012 note every change; this stage judges every
--   transaction bound (by Apple or by an upload) to a changed token;
-- - an account that a username or a token names only once it has uploaded: this stage judges the
--   open items whose binding names an account with an upload the run verified;
-- - the product catalogue, the settings that decide findings and the diff's own SQL: a digest of
--   them (reconcile.runs.judged_inputs) that differs from the last finished run's judges every item.
-- A non-consumable's family comes in whole (29_scope_families.sql). Everything else an item's
-- evidence shows is one of these rows.
WITH changed AS (
    SELECT app_account_token FROM reconcile.token_changes
     WHERE changed_xact >= pg_snapshot_xmin(:'ledger_changes_after'::pg_snapshot)::text::bigint
       AND NOT pg_visible_in_snapshot(changed_xact::text::xid8, :'ledger_changes_after'::pg_snapshot)
)
INSERT INTO diff_scope (transaction_id)
SELECT a.transaction_id FROM reconcile.apple_transactions a
 WHERE a.app_account_token IN (SELECT app_account_token FROM changed)
UNION SELECT c.transaction_id FROM reconcile.transaction_claims c
 WHERE c.app_account_token IN (SELECT app_account_token FROM changed)
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE diff_named ON COMMIT DROP AS
SELECT DISTINCT u.user_id, lower(u.user_id) AS lowered, reconcile.account_hash(u.user_id) AS hash
  FROM reconcile.upload_verifications v JOIN :uploads u ON u.id = v.upload_id
 WHERE v.last_run_id > :'resumes_after'::bigint;

-- The open items' bindings, each compared with the named accounts by equality (hashed): a join
-- with an OR per item and account would compare every pair (26.8 s for 6,589 items and the
-- 50,000 accounts of a night's uploads in the full-size bench of 2026-11-23).
INSERT INTO diff_scope (transaction_id)
SELECT b.transaction_id
  FROM (SELECT c.transaction_id, c.application_username AS username, c.app_account_token::text AS token
          FROM reconcile.review_items r
          JOIN reconcile.transaction_claims c ON c.transaction_id = r.transaction_id
         WHERE r.status IN ('open', 'in_review')
        UNION ALL
        SELECT a.transaction_id, NULL, a.app_account_token::text
          FROM reconcile.review_items r
          JOIN reconcile.apple_transactions a ON a.transaction_id = r.transaction_id
         WHERE r.status IN ('open', 'in_review') AND a.app_account_token IS NOT NULL) AS b
 WHERE EXISTS (SELECT 1 FROM diff_named)
   AND (b.username IN (SELECT user_id FROM diff_named)
        OR lower(b.username) IN (SELECT hash FROM diff_named)
        OR b.token IN (SELECT lowered FROM diff_named))
ON CONFLICT DO NOTHING;
