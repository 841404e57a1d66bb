-- A stored notification that did not verify, with why.
-- Reads:  nothing.
-- Writes: reconcile.notification_verifications
-- Values: :'id' (bigint: the notification), :'error' (text), :'run_id' (bigint).
INSERT INTO reconcile.notification_verifications (notification_id, state, error, run_id)
VALUES (:'id'::bigint, 'invalid', :'error'::text, :'run_id'::bigint)
ON CONFLICT (notification_id) DO UPDATE SET state = 'invalid', error = EXCLUDED.error,
    run_id = EXCLUDED.run_id, updated_at = now();
