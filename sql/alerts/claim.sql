-- Claims the next unsent alert after the last one a sender claimed, leasing it for the lease's
-- length (`next_attempt_at`) so that no other sender sends it meanwhile; committed at once, so no
-- lock is held across the network. Alerts older than :'keep_days' days are no longer sent (the
-- news is stale): they stay with their last error.
-- Reads:  reconcile.alerts
-- Writes: reconcile.alerts (next_attempt_at)
-- Values: :'after' (bigint), :'lease_seconds' (double precision), :'keep_days' (integer).
-- Returns: id, message (jsonb as text), attempts.
UPDATE reconcile.alerts
   SET next_attempt_at = now() + make_interval(secs => :'lease_seconds'::double precision)
 WHERE id = (SELECT id FROM reconcile.alerts
              WHERE sent_at IS NULL AND id > :'after'::bigint
                AND created_at > now() - make_interval(days => :'keep_days'::integer)
                AND (next_attempt_at IS NULL OR next_attempt_at <= now())
              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, message::text, attempts;
