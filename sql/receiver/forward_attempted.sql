-- Stage: the outcome of one attempt to forward a notification to the app's endpoint.
-- Reads:  nothing
-- Writes: reconcile.notification_forwards
-- Values: :'notification_id' (bigint); :'delivered' (boolean) — the endpoint answered 2xx;
--         :'status' (integer, null without an answer); :'error' (text, null when delivered);
--         :'retry_seconds' (double precision) — how long until the next attempt when not delivered.
UPDATE reconcile.notification_forwards
   SET attempts = attempts + 1, last_attempt_at = now(), last_status = :'status'::integer,
       last_error = :'error'::text,
       forwarded_at = CASE WHEN :'delivered'::boolean THEN now() END,
       next_attempt_at = CASE WHEN :'delivered'::boolean THEN next_attempt_at
                              ELSE now() + make_interval(secs => :'retry_seconds'::double precision) END
 WHERE notification_id = :'notification_id'::bigint AND forwarded_at IS NULL;
