-- What the run verified, with the runs since the last finished one: uploads by state and
-- Apple's status.
-- Reads:  reconcile.upload_verifications
-- Writes: nothing.
-- Values: :'resumes_after' (bigint: the last finished run).
SELECT state, coalesce(apple_status::text, ''), count(*)::bigint
  FROM reconcile.upload_verifications WHERE last_run_id > :'resumes_after'::bigint
 GROUP BY 1, 2;
