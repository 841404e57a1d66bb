-- reconcile-bench bulk's yardstick (2 of 4): the decision's event.
-- Reads:  nothing.
-- Writes: reconcile.review_events
-- Values: :'id' (bigint), :'actor' (text), :'to_user_id' (text).
INSERT INTO reconcile.review_events (review_item_id, actor, from_status, to_status, details)
VALUES (:'id'::bigint, :'actor'::text, 'open', 'resolved',
        jsonb_build_object('resolution', 'granted', 'action', 'grant', 'to_user_id', :'to_user_id'::text))
RETURNING id;
