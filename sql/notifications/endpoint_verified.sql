-- A stored notification that verified: applied, or a duplicate of a notificationUUID another copy
-- brought first.
-- Reads:  nothing.
-- Writes: reconcile.notification_verifications
-- Values: :'id' (bigint: the notification), :'state' (text: applied or duplicate), :'uuid' (uuid),
--         :'type' (text), :'subtype' (text, null), :'transaction_id' (text, null),
--         :'signed_date' (timestamptz, null), :'run_id' (bigint).
INSERT INTO reconcile.notification_verifications
    (notification_id, state, notification_uuid, notification_type, subtype, transaction_id, signed_date, run_id)
VALUES (:'id'::bigint, :'state'::text, :'uuid'::uuid, :'type'::text, :'subtype'::text, :'transaction_id'::text,
        :'signed_date'::timestamptz, :'run_id'::bigint)
ON CONFLICT (notification_id) DO UPDATE SET state = EXCLUDED.state,
    notification_uuid = EXCLUDED.notification_uuid, notification_type = EXCLUDED.notification_type,
    subtype = EXCLUDED.subtype, transaction_id = EXCLUDED.transaction_id,
    signed_date = EXCLUDED.signed_date, run_id = EXCLUDED.run_id, error = NULL, updated_at = now();
