-- The report's findings in report order; an item carried over unchanged brings its stored
-- evidence. Streamed one row at a time.
-- Reads:  report_findings, reconcile.review_items
-- Writes: nothing.
-- Values: none.
SELECT f.review_item_id, f.is_new, f.kind, f.transaction_id, f.original_transaction_id, f.user_id,
       f.product_id, coalesce(f.evidence, r.evidence::text) AS evidence, f.amount_milli, f.currency,
       f.purchase_date
  FROM report_findings f
  LEFT JOIN reconcile.review_items r ON f.evidence IS NULL AND r.id = f.review_item_id
 ORDER BY f.ordinal;
