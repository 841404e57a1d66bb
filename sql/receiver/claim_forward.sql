-- Stage: take the oldest notification due to be forwarded to the app's endpoint, and lease it.
-- Reads:  reconcile.notification_forwards, reconcile.notifications
-- Writes: reconcile.notification_forwards (next_attempt_at: the lease)
-- Values: :'lease_seconds' (double precision) — longer than one exchange can take.
--
-- One statement, committed at once: the row is locked only while it runs, never across the
-- network. Until the lease ends no other pass (another receiver, or this one after a restart)
-- sends it; a pass killed mid-send leaves it to be sent again when the lease ends (at least once).
UPDATE reconcile.notification_forwards f
   SET next_attempt_at = now() + make_interval(secs => :'lease_seconds'::double precision)
 WHERE f.notification_id = (SELECT notification_id FROM reconcile.notification_forwards
                             WHERE forwarded_at IS NULL AND next_attempt_at <= now()
                             ORDER BY next_attempt_at, notification_id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING f.notification_id, f.attempts,
          (SELECT n.signed_payload FROM reconcile.notifications n WHERE n.id = f.notification_id) AS body;
