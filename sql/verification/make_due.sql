-- Every upload still pending or retrying, in the window or before it, is due now (SPEC section
-- 3: the next run tries it again first). Claims left by earlier runs belong to processes that
-- are gone (this run holds the run lock, and workers only join the run in progress): they are
-- released rather than waited out.
-- Reads:  reconcile.upload_verifications
-- Writes: reconcile.upload_verifications (last_run_id, claims, next_attempt_at)
-- Values: :'run_id' (bigint).
UPDATE reconcile.upload_verifications
   SET last_run_id = :'run_id'::bigint, claimed_by = NULL, claimed_at = NULL, next_attempt_at = NULL,
       updated_at = now()
 WHERE state IN ('pending', 'retry') AND last_run_id IS DISTINCT FROM :'run_id'::bigint;
