-- The report's findings in report order; an item that is not new brings its rows as a run rendered
-- them (reconcile.report_rows, migrations 0023 and 0024) when they still hold, for the same layout
-- (reader, schema and build): carried over unjudged since (its last_seen_run the rows'
-- judged_run), or judged again with the same inputs (collect.sql's digest); otherwise its
-- evidence, to render them. Streamed one row at a time.
-- Reads:  report_findings, reconcile.review_items, reconcile.report_rows
-- Writes: nothing.
-- Values: :'layout' (text: ReportRowCache.layout).
--
-- Rows come out as they are read, in order: the findings are put in order first, by themselves
-- (a narrow sort), then each picks up its kept rows by key, so that the server neither sorts the
-- rows' text (16 MB at the full-size bench, which spilled to disk) nor holds back the first row
-- until it has read the last. An item's stored evidence is read only for a row not kept.
SELECT f.review_item_id, f.is_new, f.kind, f.transaction_id, f.original_transaction_id, f.user_id,
       f.product_id,
       CASE WHEN c.json IS NULL
            THEN coalesce(f.evidence, (SELECT r.evidence::text FROM reconcile.review_items r
                                        WHERE r.id = f.review_item_id))
       END AS evidence,
       f.amount_milli, f.currency, f.purchase_date, f.judged_run, f.store,
       c.json, c.markdown, c.html, c.csv
  FROM (SELECT * FROM report_findings ORDER BY ordinal) f
  -- By the item's key, row by row (LIMIT 1: the key holds one row): the layout changes with every
  -- build, and statistics that saw only the last one once made this a join of every row with
  -- every other (5 s for 6,689 items).
  LEFT JOIN LATERAL (SELECT c.json, c.markdown, c.html, c.csv FROM reconcile.report_rows c
                      WHERE NOT f.is_new AND c.review_item_id = f.review_item_id AND c.layout = :'layout'::text
                        AND (f.evidence IS NULL AND c.judged_run = f.judged_run OR c.inputs = f.inputs)
                      LIMIT 1) c ON true
 ORDER BY f.ordinal;
