-- How many uploads the run has to verify.
-- Reads:  reconcile.upload_verifications
-- Writes: nothing.
-- Values: :'run_id' (bigint).
SELECT count(*) FROM reconcile.upload_verifications
 WHERE last_run_id = :'run_id'::bigint AND state IN ('pending', 'retry');
