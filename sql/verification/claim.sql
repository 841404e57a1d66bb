-- Claims up to a limit of the run's due uploads, and at most a byte budget of payload (but
-- always one), for a worker, and returns them. Rows locked in `due` but left out by the byte
-- budget stay unclaimed: their locks end with the statement, and the next claim takes them.
-- Reads:  reconcile.upload_verifications, :uploads
-- Writes: reconcile.upload_verifications (claimed_by, claimed_at)
-- Values: :'run_id' (bigint), :'worker' (text), :'limit' (integer), :'now' (timestamptz),
--         :'lease' (double precision: seconds after which a claim is a dead worker's),
--         :'batch_bytes' (bigint: VerificationQueue.maximumBatchBytes).
WITH due AS (
    SELECT upload_id, state = 'retry' AS retrying FROM reconcile.upload_verifications
     WHERE last_run_id = :'run_id'::bigint AND state IN ('pending', 'retry')
       AND (next_attempt_at IS NULL OR next_attempt_at <= :'now'::timestamptz)
       AND (claimed_at IS NULL
            OR claimed_at < :'now'::timestamptz - make_interval(secs => :'lease'::double precision))
     ORDER BY state = 'retry' DESC, upload_id
     LIMIT :'limit'::integer
     FOR UPDATE SKIP LOCKED
), sized AS (
    SELECT d.upload_id,
           row_number() OVER w AS position, sum(octet_length(u.payload)) OVER w AS running_bytes
      FROM due d JOIN :uploads u ON u.id = d.upload_id
    WINDOW w AS (ORDER BY d.retrying DESC, d.upload_id)
), claimed AS (
    UPDATE reconcile.upload_verifications v SET claimed_by = :'worker'::text, claimed_at = :'now'::timestamptz
      FROM sized s
     WHERE v.upload_id = s.upload_id AND (s.position = 1 OR s.running_bytes <= :'batch_bytes'::bigint)
    RETURNING v.upload_id, v.attempts
)
SELECT u.id, u.user_id, u.kind, u.payload, u.application_username, u.app_account_token,
       u.claimed_transaction_id, u.uploaded_at, c.attempts
  FROM claimed c JOIN :uploads u ON u.id = c.upload_id
 ORDER BY u.id;
