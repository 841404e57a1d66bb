-- A row when the run was recorded as finished (completed or completed_with_unresolved).
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: :'run_id' (bigint).
SELECT 1 FROM reconcile.runs WHERE id = :'run_id'::bigint AND status IN ('completed', 'completed_with_unresolved');
