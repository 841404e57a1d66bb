-- Notification History rows whose transactions a run applied.
-- Reads:  nothing.
-- Writes: reconcile.notification_history
-- Values: :'ids' (bigint[]), :'run_id' (bigint).
UPDATE reconcile.notification_history SET state = 'applied', run_id = :'run_id'::bigint
 WHERE id = ANY(:'ids'::bigint[]) AND state = 'accepted';
