-- The account's uploads that no run has seen yet are queued for the next run's verification
-- (see queue_unseen_uploads_of_transactions.sql, of which this is the account's half).
-- Reads:  :uploads, reconcile.upload_verifications
-- Writes: reconcile.upload_verifications (new 'pending' rows)
-- Values: :'user_id' (text).
INSERT INTO reconcile.upload_verifications (upload_id, state)
SELECT u.id, 'pending' FROM :uploads u
 WHERE u.user_id = :'user_id'::text
   AND NOT EXISTS (SELECT 1 FROM reconcile.upload_verifications v WHERE v.upload_id = u.id)
ON CONFLICT (upload_id) DO NOTHING;
