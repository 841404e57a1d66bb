-- Stage: take the oldest Play notifications due to be asked of the Developer API, and lease them.
-- Reads:  reconcile.play_notifications
-- Writes: reconcile.play_notifications (next_attempt_at: the lease)
-- Values: :'limit' (integer) — the most one pass takes; :'lease_seconds' (double precision) —
--         longer than asking Google about them can take.
-- Returns: id, message_id, kind, notification_type, package_name, purchase_token, order_id,
--          event_time, publish_time, attempts.
--
-- Committed at once: no row is locked across the network. Until the lease ends no other pass
-- (another receiver, or this one after a restart) takes them.
UPDATE reconcile.play_notifications n
   SET next_attempt_at = now() + make_interval(secs => :'lease_seconds'::double precision)
 WHERE n.id IN (SELECT id FROM reconcile.play_notifications
                 WHERE state = 'pending' AND next_attempt_at <= now()
                 ORDER BY next_attempt_at, id LIMIT :'limit'::integer FOR UPDATE SKIP LOCKED)
RETURNING n.id, n.message_id, n.kind, n.notification_type, n.package_name, n.purchase_token, n.order_id,
          n.event_time, n.publish_time, n.attempts;
