-- Records a row the webhook took (a 2xx), with the attempts it cost; the lease ends.
-- Reads:  reconcile.action_outbox
-- Writes: reconcile.action_outbox (delivered_at, next_delivery_at, delivery_attempts, last_delivery_error)
-- Values: :'id' (bigint), :'attempts' (integer).
UPDATE reconcile.action_outbox
   SET delivered_at = coalesce(delivered_at, now()), next_delivery_at = NULL,
       delivery_attempts = delivery_attempts + :'attempts'::integer, last_delivery_error = NULL
 WHERE id = :'id'::bigint;
