-- Collects the run's findings into the session's report_findings table, from which the report
-- files are streamed after the diff's transaction committed (however many findings there are,
-- none is held in memory): the diff's findings joined to the queue, and the open items the diff
-- carried over unchanged, in report order. `new` means first seen by any judgement (SPEC section
-- 10): an item first seen after the last finished run by a nightly run was never reported by a
-- finished run, so it is new here even when a killed run created it; one the notification
-- receiver or a desk lookup opened meanwhile (a run of kind 'receiver' or 'lookup') was already
-- seen, by staff at noon, and is not new in the next nightly report.
-- Each keeps its item's last_seen_run (judged_run: the queue upsert set it already), so that
-- streaming the findings (findings.sql) need not read the items again, and a finding the run
-- judged keeps `inputs`, a digest of everything its report rows are rendered from, so that rows
-- kept for the item when it was last rendered are written again when nothing of it changed
-- (reconcile.report_rows.inputs, migration 0024).
-- Call inside the diff's transaction.
-- Reads:  diff_findings, diff_unchanged, diff_kinds, reconcile.review_items, reconcile.runs
-- Writes: report_findings (a session table: it outlives the transaction, dropped by discard.sql)
-- Values: :'resumes_after' (bigint: the last finished run).
DROP TABLE IF EXISTS report_findings;

CREATE TEMP TABLE report_findings (
    ordinal bigint NOT NULL, review_item_id bigint, is_new boolean NOT NULL, kind text NOT NULL,
    transaction_id text, original_transaction_id text, user_id text, product_id text, evidence text,
    amount_milli bigint, currency text, purchase_date timestamptz, judged_run bigint, inputs bytea,
    store text NOT NULL
);

INSERT INTO report_findings
SELECT row_number() OVER (ORDER BY k.severity_rank, f.kind, f.transaction_id, f.user_id, f.fingerprint),
       f.review_item_id, f.is_new, f.kind, f.transaction_id, f.original_transaction_id, f.user_id,
       f.product_id, f.evidence, f.amount_milli, f.currency, f.purchase_date, f.judged_run,
       CASE WHEN f.evidence IS NOT NULL AND f.review_item_id IS NOT NULL THEN
            sha256(convert_to(ROW(f.review_item_id, f.kind, f.transaction_id, f.original_transaction_id, f.user_id,
                                  f.product_id, f.evidence, f.amount_milli, f.currency, f.purchase_date,
                                  f.store)::text, 'UTF8'))
       END,
       f.store
  FROM (SELECT f.fingerprint, r.id AS review_item_id,
               (r.id IS NULL OR (r.first_seen_run > :'resumes_after'::bigint AND NOT EXISTS (
                   SELECT 1 FROM reconcile.runs o WHERE o.id = r.first_seen_run AND o.kind <> 'run'))) AS is_new,
               f.kind, f.transaction_id, f.original_transaction_id, f.user_id, f.product_id,
               f.evidence::text AS evidence, f.amount_milli, f.currency, f.purchase_date, r.last_seen_run AS judged_run,
               f.store
          FROM diff_findings f
          -- Each finding's item by the fingerprint's index (one item per fingerprint: LIMIT 1 keeps
          -- it a lookup), not a hash of every item for the few findings a night judges.
          LEFT JOIN LATERAL (SELECT r.id, r.status, r.first_seen_run, r.last_seen_run FROM reconcile.review_items r
                              WHERE r.fingerprint = f.fingerprint LIMIT 1) r ON true
         WHERE r.id IS NULL OR r.status IN ('open', 'in_review', 'awaiting_approval')
        -- The open items the diff carried over unchanged, as the run that last detected them
        -- found them (sql/diff/75_unchanged.sql brings what the report lists of them). Their
        -- evidence is read once, when the report is streamed.
        UNION ALL
        SELECT u.fingerprint, u.id,
               u.first_seen_run > :'resumes_after'::bigint AND NOT EXISTS (
                   SELECT 1 FROM reconcile.runs o WHERE o.id = u.first_seen_run AND o.kind <> 'run'),
               u.kind, u.transaction_id,
               u.original_transaction_id, u.detected_user_id, u.product_id, NULL,
               u.amount_milli, u.currency, u.purchase_date, u.last_seen_run, u.store
          FROM diff_unchanged u) f
  JOIN diff_kinds k ON k.kind = f.kind;
