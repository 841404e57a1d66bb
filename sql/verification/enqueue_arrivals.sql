-- SPEC section 5: an upload is read by the first run after it is stored, whatever its
-- uploaded_at (an app that queues uploads and stores them with the client's time, a replica
-- lagging past the window's overlap). The triggers of migration 0014 note each upload as it is
-- stored; this one statement takes the notes its snapshot shows committed and enqueues their
-- uploads, so a note committed meanwhile stays for the next run. An operator's uploads relation
-- without the triggers is read by uploaded_at alone (enqueue_window.sql).
-- Reads:  reconcile.upload_arrivals, :uploads
-- Writes: reconcile.upload_arrivals (emptied of what it showed), reconcile.upload_verifications
-- Values: :'run_id' (bigint).
WITH arrived AS (DELETE FROM reconcile.upload_arrivals RETURNING upload_id)
INSERT INTO reconcile.upload_verifications (upload_id, state, first_run_id, last_run_id)
SELECT DISTINCT a.upload_id, 'pending', :'run_id'::bigint, :'run_id'::bigint FROM arrived a
 WHERE EXISTS (SELECT 1 FROM :uploads u WHERE u.id = a.upload_id)
ON CONFLICT (upload_id) DO NOTHING;
