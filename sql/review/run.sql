-- One run.
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: :'id' (bigint).
SELECT * FROM reconcile.runs WHERE id = :'id'::bigint;
