-- Appends the event of a person's or a policy's transition; returns its id.
-- Reads:  nothing.
-- Writes: reconcile.review_events
-- Values: :'item_id' (bigint), :'actor' (text), :'from_status', :'to_status' (text), :'note' (text, or
--         null), :'details' (jsonb, or null), :'run_id' (bigint: the run whose policies decided, or null),
--         :'os_login' (text: the operating-system login of a command line's decision, or null).
INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note, details, os_login)
VALUES (:'item_id'::bigint, :'run_id'::bigint, :'actor'::text, :'from_status'::text, :'to_status'::text,
        :'note'::text, :'details'::jsonb, :'os_login'::text)
RETURNING id;
