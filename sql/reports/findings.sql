-- The report's findings in report order; an item carried over unchanged brings its rows as a run
-- rendered them (reconcile.report_rows, migration 0023) when they still hold: the item not new,
-- unjudged since (its last_seen_run the rows' judged_run), for the same layout (reader, schema
-- and build); otherwise its stored evidence, to render them. Streamed one row at a time.
-- Reads:  report_findings, reconcile.review_items, reconcile.report_rows
-- Writes: nothing.
-- Values: :'layout' (text: ReportRowCache.layout).
SELECT f.review_item_id, f.is_new, f.kind, f.transaction_id, f.original_transaction_id, f.user_id,
       f.product_id, CASE WHEN c.json IS NULL THEN coalesce(f.evidence, r.evidence::text) END AS evidence,
       f.amount_milli, f.currency, f.purchase_date, r.last_seen_run AS judged_run,
       c.json, c.markdown, c.html, c.csv
  FROM report_findings f
  LEFT JOIN reconcile.review_items r ON r.id = f.review_item_id
  -- By the item's key, row by row (LIMIT 1: the key holds one row): the layout changes with every
  -- build, and statistics that saw only the last one once made this a join of every row with
  -- every other (5 s for 6,689 items).
  LEFT JOIN LATERAL (SELECT c.json, c.markdown, c.html, c.csv FROM reconcile.report_rows c
                      WHERE f.evidence IS NULL AND NOT f.is_new AND c.review_item_id = f.review_item_id
                        AND c.judged_run = r.last_seen_run AND c.layout = :'layout'::text
                      LIMIT 1) c ON true
 ORDER BY f.ordinal;
