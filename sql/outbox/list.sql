-- Outbox rows oldest first (`outbox list`); with pending, only those not consumed.
-- Reads:  reconcile.action_outbox
-- Writes: nothing.
-- Values: :'pending' (boolean), :'limit' (bigint).
SELECT * FROM reconcile.action_outbox
 WHERE NOT :'pending'::boolean OR consumed_at IS NULL
 ORDER BY id LIMIT :'limit'::bigint;
