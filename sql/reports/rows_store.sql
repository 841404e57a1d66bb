-- Keeps the rows a run rendered for the items it reported (ReportRowCache, migration 0023),
-- replacing what the cache held for them.
-- Reads:  report_rows_staged, reconcile.review_items
-- Writes: reconcile.report_rows
-- Values: :'layout' (text: ReportRowCache.layout).
INSERT INTO reconcile.report_rows AS c (review_item_id, judged_run, layout, json, markdown, html, csv)
SELECT s.review_item_id, s.judged_run, :'layout'::text, s.json, s.markdown, s.html, s.csv
  FROM report_rows_staged s
 WHERE EXISTS (SELECT 1 FROM reconcile.review_items r WHERE r.id = s.review_item_id)
ON CONFLICT (review_item_id) DO UPDATE
   SET judged_run = EXCLUDED.judged_run, layout = EXCLUDED.layout, json = EXCLUDED.json,
       markdown = EXCLUDED.markdown, html = EXCLUDED.html, csv = EXCLUDED.csv;
