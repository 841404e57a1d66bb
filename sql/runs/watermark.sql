-- The end of the last finished run's window (dry runs do not count: they wrote no queue).
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: none.
SELECT max(window_until) FROM reconcile.runs
 WHERE status IN ('completed', 'completed_with_unresolved') AND NOT dry_run;
