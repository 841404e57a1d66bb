-- Stage: a Play notification Google could not answer now (5xx, 429, a timeout) or whose service
-- account it refused (401, 403): left pending, asked again after a wait.
-- Reads:  nothing
-- Writes: reconcile.play_notifications
-- Values: :'ids' (bigint[]), :'error' (text) — why, for the operator (never a secret);
--         :'retry_seconds' (double precision); :'counted' (boolean) — whether it was asked (an
--         attempt), or only left unasked.
UPDATE reconcile.play_notifications
   SET next_attempt_at = now() + make_interval(secs => :'retry_seconds'::double precision),
       last_error = :'error'::text,
       attempts = attempts + CASE WHEN :'counted'::boolean THEN 1 ELSE 0 END
 WHERE id = ANY(:'ids'::bigint[]) AND state = 'pending';
