-- Records a batch's verdicts in one statement. What a verdict does not establish (how and where
-- an upload was verified) stays as it was; the claims end.
-- Reads:  stage_verdicts
-- Writes: reconcile.upload_verifications
-- Values: :'now' (timestamptz), :'run_id' (bigint).
UPDATE reconcile.upload_verifications v
   SET state = s.state, apple_status = s.apple_status, error_code = s.error_code,
       last_error = s.last_error, attempts = s.attempts, next_attempt_at = s.next_attempt_at,
       updated_at = :'now'::timestamptz, claimed_by = NULL, claimed_at = NULL, last_run_id = :'run_id'::bigint,
       method = CASE WHEN s.state = 'verified' THEN s.method ELSE v.method END,
       environment = CASE WHEN s.state = 'verified' THEN s.environment ELSE v.environment END,
       bundle_id = CASE WHEN s.state = 'verified' THEN s.bundle_id ELSE v.bundle_id END,
       store = s.store,
       verified_at = CASE WHEN s.state = 'verified' THEN :'now'::timestamptz ELSE v.verified_at END
  FROM stage_verdicts s
 WHERE v.upload_id = s.upload_id;
