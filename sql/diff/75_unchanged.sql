-- Stage: unchanged — the open items this run carries over without judging them again
-- (scope/changed_bindings.sql says why that is safe): their evidence and queue row stay as
-- they are, and the report lists them from there. Empty when the run judged every open item.
-- Items the run would have left alone anyway (their transaction, or the account their rule waits
-- on, still waits on a verification; 82_queue_auto_resolve.sql) are not among them, nor items
-- about an upload, which every run judges over its uploads.
-- Reads:  reconcile.review_items, diff_scope, diff_blocked, diff_pending_users, diff_findings
-- Writes: diff_unchanged (id)
-- Values: :'upload_kinds' (text[]: the kinds about an upload, FindingKind.isAboutAnUpload).
CREATE TEMP TABLE diff_unchanged ON COMMIT DROP AS
SELECT r.id FROM reconcile.review_items r
 WHERE r.status IN ('open', 'in_review', 'awaiting_approval') AND r.transaction_id IS NOT NULL
   AND NOT r.kind = ANY (:'upload_kinds'::text[])
   AND NOT EXISTS (SELECT 1 FROM diff_scope s WHERE s.transaction_id = r.transaction_id)
   AND NOT EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = r.transaction_id)
   AND NOT EXISTS (SELECT 1 FROM diff_pending_users p WHERE p.user_id = r.held_by_user_id)
   AND NOT EXISTS (SELECT 1 FROM diff_findings f WHERE f.fingerprint = r.fingerprint);
