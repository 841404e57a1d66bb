-- What the latest alert check before run :'run_id' measured (none: every rule's count is new).
-- Reads:  reconcile.alert_checks
-- Writes: nothing
-- Values: :'run_id' (bigint).
-- Returns: measures (jsonb as text), at most one row.
SELECT measures::text FROM reconcile.alert_checks
 WHERE run_id < :'run_id'::bigint
 ORDER BY run_id DESC LIMIT 1;
