-- The next notifications `notifications sync` accepted from Get Notification History, to apply.
-- Reads:  reconcile.notification_history
-- Writes: nothing.
-- Values: :'batch_size' (integer).
SELECT id, signed_payload FROM reconcile.notification_history
 WHERE state = 'accepted' ORDER BY id LIMIT :'batch_size'::integer;
