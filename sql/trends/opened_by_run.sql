-- The findings run :'run_id' opened, by kind (its own night of report.html's trends).
-- Reads:  reconcile.review_items
-- Writes: nothing
-- Values: :'run_id' (bigint).
-- Returns: kind (text), count (integer).
SELECT kind, count(*)::integer FROM reconcile.review_items
 WHERE first_seen_run = :'run_id'::bigint
 GROUP BY kind;
