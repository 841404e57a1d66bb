-- Forgets the cached rows (ReportRowCache, migration 0023) of items the run's report no longer
-- lists: decided, auto-resolved, or held back while a verification is pending (rendered again
-- when listed again). Call before discard.sql.
-- Reads:  report_findings, reconcile.report_rows
-- Writes: reconcile.report_rows
-- Values: none.
DELETE FROM reconcile.report_rows c
 WHERE NOT EXISTS (SELECT 1 FROM report_findings f WHERE f.review_item_id = c.review_item_id);
