-- Claims the next undelivered row after the last one a pass claimed, leasing it for the lease's
-- length (`next_delivery_at`) so that no other pass sends it meanwhile. One statement, committed
-- at once: the row is locked only while it runs, so `outbox ack` and the app's `SKIP LOCKED`
-- consumer never wait for the webhook.
-- Reads:  reconcile.action_outbox
-- Writes: reconcile.action_outbox (next_delivery_at)
-- Values: :'after' (bigint), :'lease_seconds' (double precision).
UPDATE reconcile.action_outbox
   SET next_delivery_at = now() + make_interval(secs => :'lease_seconds'::double precision)
 WHERE id = (SELECT id FROM reconcile.action_outbox
              WHERE delivered_at IS NULL AND id > :'after'::bigint
                AND (next_delivery_at IS NULL OR next_delivery_at <= now())
              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING *;
