-- The last run that finished its work and wrote the queue (0 when none). Dry runs wrote no queue.
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: none.
SELECT coalesce(max(id), 0) FROM reconcile.runs
 WHERE status IN ('completed', 'completed_with_unresolved') AND NOT dry_run;
