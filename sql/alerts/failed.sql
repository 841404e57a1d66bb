-- Records an alert the webhook did not take, with why; the lease ends and the next sender (the
-- next run) tries again.
-- Reads:  reconcile.alerts
-- Writes: reconcile.alerts (attempts, last_error, next_attempt_at)
-- Values: :'id' (bigint), :'error' (text).
UPDATE reconcile.alerts
   SET attempts = attempts + 1, last_error = :'error'::text, next_attempt_at = NULL
 WHERE id = :'id'::bigint AND sent_at IS NULL;
