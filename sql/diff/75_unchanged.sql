-- Stage: unchanged — the open items this run carries over without judging them again
-- (scope/changed_bindings.sql says why that is safe): their evidence and queue row stay as
-- they are, and the report lists them from there. Empty when the run judged every open item.
-- Items the run would have left alone anyway (their transaction, or the account their rule waits
-- on, still waits on a verification; 82_queue_auto_resolve.sql) are not among them, nor items
-- about an upload, which every run judges over its uploads.
-- Each comes with what the report lists of it (ReportBuilder.collect reads them from here, not
-- from the items a second time); the queue stages after this one leave these items as they are.
-- Reads:  reconcile.review_items, diff_scope, diff_blocked, diff_pending_users, diff_findings
-- Writes: diff_unchanged (id, and the item's fingerprint, first_seen_run, kind, transaction_id,
--         original_transaction_id, detected_user_id, product_id, amount_milli, currency,
--         purchase_date, last_seen_run, store)
-- Values: :'upload_kinds' (text[]: the kinds about an upload, FindingKind.isAboutAnUpload).
--
-- NOT IN over the verifications' holds (no NULL in them, nor in the transaction compared): each
-- is hashed once, where NOT EXISTS rescanned the table, empty on most nights, for every item.
CREATE TEMP TABLE diff_unchanged ON COMMIT DROP AS
SELECT r.id, r.fingerprint, r.first_seen_run, r.kind, r.transaction_id, r.original_transaction_id,
       r.detected_user_id, r.product_id, r.amount_milli, r.currency, r.purchase_date, r.last_seen_run, r.store
  FROM reconcile.review_items r
 WHERE r.status IN ('open', 'in_review', 'awaiting_approval') AND r.transaction_id IS NOT NULL
   AND NOT r.kind = ANY (:'upload_kinds'::text[])
   AND NOT EXISTS (SELECT 1 FROM diff_scope s WHERE s.transaction_id = r.transaction_id)
   AND r.transaction_id NOT IN (SELECT b.transaction_id FROM diff_blocked b WHERE b.transaction_id IS NOT NULL)
   AND (r.held_by_user_id IS NULL
        OR r.held_by_user_id NOT IN (SELECT p.user_id FROM diff_pending_users p WHERE p.user_id IS NOT NULL))
   AND NOT EXISTS (SELECT 1 FROM diff_findings f WHERE f.fingerprint = r.fingerprint);
