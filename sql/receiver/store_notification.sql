-- Stage: store one notification Apple posted to the receiver, once per notificationUUID
-- (reconcile notifications receive; SPEC section 16).
-- Reads:  reconcile.notifications
-- Writes: reconcile.notifications, reconcile.notification_forwards
-- Values: :'body' (text) — the body exactly as Apple posted it; :'notification_uuid' (uuid) — its
--         verified notificationUUID; :'forward' (boolean) — whether the app's endpoint gets a copy.
--
-- Apple retries a notification it got no 200 for, with the same notificationUUID: the second copy
-- stores nothing and returns the first one's row (`stored` false). A copy racing the first waits
-- for it on the unique index and returns no row; it is a duplicate too. The forwarding row is
-- written in the same statement, so a notification is never stored without its copy queued.
WITH stored AS (
    INSERT INTO reconcile.notifications (signed_payload, notification_uuid)
    VALUES (:'body'::text, :'notification_uuid'::uuid)
    ON CONFLICT (notification_uuid) WHERE notification_uuid IS NOT NULL DO NOTHING
    RETURNING id
), queued AS (
    INSERT INTO reconcile.notification_forwards (notification_id)
    SELECT id FROM stored WHERE :'forward'::boolean
    RETURNING notification_id
)
SELECT id, true AS stored FROM stored
UNION ALL
SELECT n.id, false AS stored FROM reconcile.notifications n
 WHERE n.notification_uuid = :'notification_uuid'::uuid AND NOT EXISTS (SELECT 1 FROM stored);
