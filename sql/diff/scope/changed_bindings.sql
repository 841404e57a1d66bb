-- Stage: scope of a window run — the transactions whose buyer a change of the night can change.
-- Reads:  reconcile.token_changes, reconcile.ledger_changes, reconcile.apple_transactions,
--         reconcile.transaction_claims, reconcile.upload_verifications, :uploads
-- Writes: diff_scope; diff_named (user_id, lowered, hash) — the accounts the night's changes touch
-- Values: :'ledger_changes_after' (pg_snapshot: the last finished run's), :'resumes_after' (bigint).
--
-- SPEC section 5: a binding (appAccountToken or applicationUsername) resolves against every
-- account the job knows. So the buyer of a transaction changes, with no change to any of its own
-- rows, when
-- - a token it is bound by is written, remapped or removed (reconcile.token_changes); or
-- - an account its token or username names becomes known (its first upload, ledger row or token
--   row) or unknown (its last one deleted): the night's verified uploads, the ledger's changes and
--   the tokens' changes name those accounts, old and new (migration 0014).
-- This stage judges every such transaction, whether or not it has a review item: one credited to
-- the uploader while its username named an account the job met only later is a wrong_account
-- the night that account appears, as a run over the whole history finds it.
--
-- The rest of what a finding reads says itself when it changed, and other stages judge it:
-- - Apple's transactions (last_seen_run: uploads, stored and synced notifications, Server API
--   answers), the uploads' claims (run_id), their verifications (last_run_id, stamped again every
--   run while pending or retrying) and Get Transaction Info's answers (run_id):
--   scope/touched_by_run.sql judges whatever the runs since the last finished one wrote;
-- - uploads, by arrival whatever their uploaded_at (migration 0014; VerificationQueue.enqueue);
-- - the ledger: scope/ledger_changes.sql judges every change the last finished run's snapshot
--   did not show;
-- - the product catalogue, the settings that decide findings and the diff's own SQL: a digest of
--   them (reconcile.runs.judged_inputs) that differs from the last finished run's judges every
--   open item; a transaction without an item is clean under the old inputs and stays clean only
--   if nothing of the above changed (docs/architecture.md, "What a nightly run judges again").
-- A non-consumable's family comes in whole (scope/families.sql).
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
SELECT user_id, lower(user_id) AS lowered, reconcile.account_hash(user_id) AS hash
  FROM (SELECT u.user_id FROM reconcile.upload_verifications v JOIN :uploads u ON u.id = v.upload_id
         WHERE v.last_run_id > :'resumes_after'::bigint
        UNION
        SELECT user_id FROM reconcile.ledger_changes
         WHERE changed_xact >= pg_snapshot_xmin(:'ledger_changes_after'::pg_snapshot)::text::bigint
           AND NOT pg_visible_in_snapshot(changed_xact::text::xid8, :'ledger_changes_after'::pg_snapshot)
           AND user_id IS NOT NULL
        UNION
        SELECT user_id FROM reconcile.token_changes
         WHERE changed_xact >= pg_snapshot_xmin(:'ledger_changes_after'::pg_snapshot)::text::bigint
           AND NOT pg_visible_in_snapshot(changed_xact::text::xid8, :'ledger_changes_after'::pg_snapshot)
           AND user_id IS NOT NULL) AS touched;

ANALYZE diff_named;

-- Every binding naming one of those accounts, compared by equality through indexes (hashed): a
-- username equal to the account or to its SHA-256 (the claims' index on the lowercased username;
-- the exact rule in 43_buyer.sql decides), a token equal to the account id (Apple's or the
-- upload's). A join with an OR per binding and account would compare every pair (26.8 s for the
-- 50,000 accounts of a night's uploads in the full-size bench of 2026-11-23).
-- EXISTS first: a one-time filter, so a night that touched no account reads no index at all.
INSERT INTO diff_scope (transaction_id)
SELECT c.transaction_id FROM reconcile.transaction_claims c
 WHERE EXISTS (SELECT 1 FROM diff_named) AND c.application_username IS NOT NULL
   AND lower(c.application_username) IN (SELECT hash FROM diff_named UNION SELECT lowered FROM diff_named)
UNION SELECT c.transaction_id FROM reconcile.transaction_claims c
 WHERE EXISTS (SELECT 1 FROM diff_named) AND c.app_account_token IN (SELECT lowered::uuid FROM diff_named
                                WHERE lowered ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
UNION SELECT a.transaction_id FROM reconcile.apple_transactions a
 WHERE EXISTS (SELECT 1 FROM diff_named) AND a.app_account_token IN (SELECT lowered::uuid FROM diff_named
                                WHERE lowered ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
-- A Play purchase's own binding (obfuscatedAccountId), which no upload's claim carries when no
-- upload held the order (a renewal, an order the Orders API or the voided list brought): through
-- the index on its lowercase (migration 0037).
UNION SELECT a.transaction_id FROM reconcile.apple_transactions a
 WHERE EXISTS (SELECT 1 FROM diff_named) AND a.obfuscated_account_id IS NOT NULL
   AND lower(a.obfuscated_account_id) IN (SELECT hash FROM diff_named UNION SELECT lowered FROM diff_named)
ON CONFLICT DO NOTHING;
