-- Stage: blocked — what the run must not judge yet.
-- Reads:  reconcile.upload_verifications, :uploads
-- Writes: diff_blocked (transaction_id) — transactions an upload still being verified
--         (pending or retry) says it reports; diff_pending_users (user_id) — accounts with an
--         upload still being verified (their deliveries are not judged unknown to Apple yet).
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS diff_blocked (transaction_id text) ON COMMIT DELETE ROWS;
INSERT INTO diff_blocked (transaction_id)
SELECT DISTINCT u.claimed_transaction_id AS transaction_id
  FROM reconcile.upload_verifications v JOIN :uploads u ON u.id = v.upload_id
 WHERE v.state IN ('pending', 'retry') AND u.claimed_transaction_id IS NOT NULL;

CREATE TEMP TABLE IF NOT EXISTS diff_pending_users (user_id text) ON COMMIT DELETE ROWS;
INSERT INTO diff_pending_users (user_id)
SELECT DISTINCT u.user_id
  FROM reconcile.upload_verifications v JOIN :uploads u ON u.id = v.upload_id
 WHERE v.state IN ('pending', 'retry');

ANALYZE diff_blocked, diff_pending_users;
