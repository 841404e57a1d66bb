-- Records a row every attempt of a pass failed to deliver, with the last error; the lease ends
-- and the next pass tries again.
-- Reads:  reconcile.action_outbox
-- Writes: reconcile.action_outbox (next_delivery_at, delivery_attempts, last_delivery_error)
-- Values: :'id' (bigint), :'attempts' (integer), :'error' (text).
UPDATE reconcile.action_outbox
   SET next_delivery_at = NULL, delivery_attempts = delivery_attempts + :'attempts'::integer,
       last_delivery_error = :'error'::text
 WHERE id = :'id'::bigint AND delivered_at IS NULL;
