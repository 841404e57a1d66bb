-- Appends the event of a person's transition; returns its id.
-- Reads:  nothing.
-- Writes: reconcile.review_events
-- Values: :'item_id' (bigint), :'actor' (text), :'from_status', :'to_status' (text), :'note' (text, or
--         null), :'details' (jsonb, or null).
INSERT INTO reconcile.review_events (review_item_id, actor, from_status, to_status, note, details)
VALUES (:'item_id'::bigint, :'actor'::text, :'from_status'::text, :'to_status'::text, :'note'::text,
        :'details'::jsonb)
RETURNING id;
