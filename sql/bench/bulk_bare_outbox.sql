-- reconcile-bench bulk's yardstick (4 of 4): the grant queued for the app.
-- Reads:  nothing.
-- Writes: reconcile.action_outbox
-- Values: :'id', :'event_id' (bigint), :'transaction_id', :'product_id' (text), :'quantity' (integer),
--         :'to_user_id', :'actor' (text).
INSERT INTO reconcile.action_outbox
    (review_item_id, review_event_id, action, transaction_id, product_id, quantity, to_user_id, decided_by)
VALUES (:'id'::bigint, :'event_id'::bigint, 'grant', :'transaction_id'::text, :'product_id'::text,
        :'quantity'::integer, :'to_user_id'::text, :'actor'::text);
