-- Rows kept for an item this run judged again and found as they were rendered from (the same
-- inputs, collect.sql's digest, and the same layout) are the item's rows as this run leaves it:
-- they take its last_seen_run, so that a run carrying the item over unjudged writes them too
-- (findings.sql), rather than rendering them again. Call before discard.sql.
-- Reads:  report_findings, reconcile.report_rows
-- Writes: reconcile.report_rows (judged_run)
-- Values: :'layout' (text: ReportRowCache.layout).
--
-- The kept rows by key (an array of the judged items' keys): statistics of report_findings are
-- never taken, and a join planned from guesses could read every kept row.
UPDATE reconcile.report_rows c SET judged_run = f.judged_run
  FROM report_findings f
 WHERE c.review_item_id = ANY (ARRAY(SELECT j.review_item_id FROM report_findings j
                                      WHERE j.inputs IS NOT NULL AND NOT j.is_new))
   AND f.review_item_id = c.review_item_id AND f.inputs = c.inputs AND f.judged_run IS NOT NULL
   AND c.layout = :'layout'::text AND c.judged_run <> f.judged_run;
