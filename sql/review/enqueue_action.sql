-- Writes the one outbox row of an item's decision. The UNIQUE (review_item_id) constraint backs
-- the caller's status check: one decision per item. The row carries its item's store (SPEC section
-- 18), so that the app's consumer and the webhook know which store's purchase to act on.
-- Reads:  reconcile.review_items
-- Writes: reconcile.action_outbox
-- Values: :'item_id', :'event_id' (bigint), :'action' (text), :'transaction_id', :'product_id' (text),
--         :'quantity' (integer), :'from_user_id', :'to_user_id' (text), :'decided_by' (text),
--         :'note' (text); all but the ids and the action may be null.
INSERT INTO reconcile.action_outbox
    (review_item_id, review_event_id, action, transaction_id, product_id, quantity, from_user_id, to_user_id,
     decided_by, note, store)
SELECT :'item_id'::bigint, :'event_id'::bigint, :'action'::text, :'transaction_id'::text, :'product_id'::text,
       :'quantity'::integer, :'from_user_id'::text, :'to_user_id'::text, :'decided_by'::text, :'note'::text, r.store
  FROM reconcile.review_items r
 WHERE r.id = :'item_id'::bigint
RETURNING *;
