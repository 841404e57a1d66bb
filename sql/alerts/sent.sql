-- Records an alert the webhook took (a 2xx answer).
-- Reads:  reconcile.alerts
-- Writes: reconcile.alerts (sent_at, attempts, last_error)
-- Values: :'id' (bigint).
UPDATE reconcile.alerts
   SET sent_at = now(), attempts = attempts + 1, last_error = NULL, next_attempt_at = NULL
 WHERE id = :'id'::bigint AND sent_at IS NULL;
