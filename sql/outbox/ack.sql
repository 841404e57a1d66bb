-- Marks rows consumed by an actor (a row acked before keeps its first ack), then returns the ids
-- of those that exist.
-- Reads:  reconcile.action_outbox
-- Writes: reconcile.action_outbox (consumed_at, consumed_by)
-- Values: :'ids' (bigint[]), :'actor' (text).
UPDATE reconcile.action_outbox SET consumed_at = now(), consumed_by = :'actor'::text
 WHERE id = ANY (:'ids'::bigint[]) AND consumed_at IS NULL;

SELECT id FROM reconcile.action_outbox WHERE id = ANY (:'ids'::bigint[]);
