-- Stage: store one Pub/Sub push of a Google Play real-time developer notification, once per
-- messageId (reconcile notifications receive --play-path; SPEC section 18).
-- Reads:  reconcile.play_notifications
-- Writes: reconcile.play_notifications
-- Values: :'message_id' (text), :'subscription' (text), :'publish_time' (timestamptz),
--         :'body' (text) — the push exactly as posted; :'data' (text) — the decoded data, null
--         when it is not base64 text; :'data_error' (text) — why the data is not a developer
--         notification, null when it is one; :'kind' (text); :'notification_type' (integer);
--         :'package_name' (text); :'purchase_token' (text); :'order_id' (text);
--         :'event_time' (timestamptz); :'state' (text) — 'pending' when the worker must ask
--         Google, 'stored' when there is nothing to ask (a test, an unknown kind, garbage).
-- Returns: id, stored (boolean: false for a redelivery, whose first copy's id is returned).
--
-- Pub/Sub redelivers a push it got no 2xx for (or one acknowledged late) with the same
-- messageId: the second copy stores nothing. A copy racing the first waits for it on the unique
-- index and returns no row; it is a redelivery too.
WITH stored AS (
    INSERT INTO reconcile.play_notifications
        (message_id, subscription, publish_time, body, data, data_error, kind, notification_type, package_name,
         purchase_token, order_id, event_time, state)
    VALUES (:'message_id'::text, :'subscription'::text, :'publish_time'::timestamptz, :'body'::text, :'data'::text,
            :'data_error'::text, :'kind'::text, :'notification_type'::integer, :'package_name'::text,
            :'purchase_token'::text, :'order_id'::text, :'event_time'::timestamptz, :'state'::text)
    ON CONFLICT (message_id) DO NOTHING
    RETURNING id
)
SELECT id, true AS stored FROM stored
UNION ALL
SELECT n.id, false AS stored FROM reconcile.play_notifications n
 WHERE n.message_id = :'message_id'::text AND NOT EXISTS (SELECT 1 FROM stored);
