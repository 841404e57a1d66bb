-- Forgets the cached rows (ReportRowCache, migration 0023) of items the run's report no longer
-- lists: decided, auto-resolved, or held back while a verification is pending (rendered again
-- when listed again). Call before discard.sql.
-- Reads:  report_findings, reconcile.report_rows
-- Writes: reconcile.report_rows
-- Values: none.
--
-- The keys to forget come from the key's index (an index-only scan) rather than from the table,
-- whose rows are a few kilobytes each: most nights there is nothing to forget.
DELETE FROM reconcile.report_rows c
 WHERE c.review_item_id IN (SELECT k.review_item_id FROM reconcile.report_rows k
                            EXCEPT
                            SELECT f.review_item_id FROM report_findings f WHERE f.review_item_id IS NOT NULL);
