-- Uploads claiming one of the customer's transactions that no run has seen yet are queued for
-- the next run's verification, so that the diff calls what they carry `pending` rather than
-- judging without them. Its own statement rather than an OR with the account's uploads
-- (queue_unseen_uploads_of_user.sql), so that each reads its own index.
-- Reads:  :uploads, reconcile.upload_verifications
-- Writes: reconcile.upload_verifications (new 'pending' rows)
-- Values: :'transaction_ids' (text[]).
INSERT INTO reconcile.upload_verifications (upload_id, state)
SELECT u.id, 'pending' FROM :uploads u
 WHERE u.claimed_transaction_id = ANY(:'transaction_ids'::text[])
   AND NOT EXISTS (SELECT 1 FROM reconcile.upload_verifications v WHERE v.upload_id = u.id)
ON CONFLICT (upload_id) DO NOTHING;
