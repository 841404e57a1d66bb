-- Records the digest of what the run's findings depend on beyond their own rows, then returns a
-- row when the last finished run's digest was the same (a null digest is never the same).
-- Reads:  reconcile.runs
-- Writes: reconcile.runs (judged_inputs)
-- Values: :'run_id' (bigint), :'digest' (text, or null), :'resumes_after' (bigint).
UPDATE reconcile.runs SET judged_inputs = :'digest'::text WHERE id = :'run_id'::bigint;

SELECT 1 FROM reconcile.runs WHERE id = :'resumes_after'::bigint AND judged_inputs = :'digest'::text;
