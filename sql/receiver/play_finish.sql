-- Stage: what came of asking Google about one Play notification: its final state (applied,
-- not_found, gone, stored), the white row it stored, and the pass's run.
-- Reads:  nothing
-- Writes: reconcile.play_notifications
-- Values: :'id' (bigint), :'state' (text), :'transaction_id' (text, null when nothing was
--         stored), :'error' (text: why nothing was stored, else null), :'run_id' (bigint).
UPDATE reconcile.play_notifications
   SET state = :'state'::text, transaction_id = :'transaction_id'::text, last_error = :'error'::text,
       attempts = attempts + 1, processed_at = now(), processed_run = :'run_id'::bigint
 WHERE id = :'id'::bigint AND state = 'pending';
