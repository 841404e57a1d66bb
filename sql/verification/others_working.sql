-- A row when other workers still hold unexpired claims on the run's due work.
-- Reads:  reconcile.upload_verifications
-- Writes: nothing.
-- Values: :'run_id' (bigint), :'now' (timestamptz), :'lease' (double precision: seconds).
SELECT 1 FROM reconcile.upload_verifications
 WHERE last_run_id = :'run_id'::bigint AND state IN ('pending', 'retry')
   AND (next_attempt_at IS NULL OR next_attempt_at <= :'now'::timestamptz)
   AND claimed_at >= :'now'::timestamptz - make_interval(secs => :'lease'::double precision)
 LIMIT 1;
