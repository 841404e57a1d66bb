-- The window's new uploads, by an anti-join: over a whole history of verified uploads it costs a
-- fifth of an upsert, which probes the primary key once per upload. The window's uploads still
-- pending or retrying are made due by make_due.sql.
-- Reads:  :uploads, reconcile.upload_verifications
-- Writes: reconcile.upload_verifications
-- Values: :'run_id' (bigint), :'since', :'until' (timestamptz: the window [since, until)).
INSERT INTO reconcile.upload_verifications (upload_id, state, first_run_id, last_run_id)
SELECT u.id, 'pending', :'run_id'::bigint, :'run_id'::bigint FROM :uploads u
 WHERE u.uploaded_at >= :'since'::timestamptz AND u.uploaded_at < :'until'::timestamptz
   AND NOT EXISTS (SELECT 1 FROM reconcile.upload_verifications v WHERE v.upload_id = u.id)
ON CONFLICT (upload_id) DO NOTHING;
