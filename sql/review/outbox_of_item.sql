-- The outbox row of an item's decision, if any.
-- Reads:  reconcile.action_outbox
-- Writes: nothing.
-- Values: :'item_id' (bigint).
SELECT * FROM reconcile.action_outbox WHERE review_item_id = :'item_id'::bigint;
