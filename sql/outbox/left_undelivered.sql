-- How many rows a delivery pass out of time did not reach: undelivered, not leased, after the
-- last it claimed.
-- Reads:  reconcile.action_outbox
-- Writes: nothing.
-- Values: :'after' (bigint: the last row the pass claimed).
SELECT count(*) FROM reconcile.action_outbox
 WHERE delivered_at IS NULL AND id > :'after'::bigint AND (next_delivery_at IS NULL OR next_delivery_at <= now());
