-- Keeps the rows a run rendered for the items it reported (ReportRowCache, migrations 0023 and
-- 0024), replacing what the cache held for them, with the digest of their inputs for the findings
-- the run judged (collect.sql). Call before discard.sql.
-- Reads:  report_rows_staged, report_findings, reconcile.review_items
-- Writes: reconcile.report_rows
-- Values: :'layout' (text: ReportRowCache.layout).
INSERT INTO reconcile.report_rows AS c (review_item_id, judged_run, layout, inputs, json, markdown, html, csv)
SELECT s.review_item_id, s.judged_run, :'layout'::text, f.inputs, s.json, s.markdown, s.html, s.csv
  FROM report_rows_staged s
  LEFT JOIN report_findings f ON f.review_item_id = s.review_item_id
 WHERE EXISTS (SELECT 1 FROM reconcile.review_items r WHERE r.id = s.review_item_id)
ON CONFLICT (review_item_id) DO UPDATE
   SET judged_run = EXCLUDED.judged_run, layout = EXCLUDED.layout, inputs = EXCLUDED.inputs, json = EXCLUDED.json,
       markdown = EXCLUDED.markdown, html = EXCLUDED.html, csv = EXCLUDED.csv;
