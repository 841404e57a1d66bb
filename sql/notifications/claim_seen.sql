-- Records a verified notification in the ledger of every notificationUUID (SPEC section 14):
-- true when this copy is the first of its UUID (or is the copy recorded before), false for a
-- duplicate, whichever source (the app's endpoint, the receiver, Notification History) brought it.
-- Reads:  reconcile.notifications_seen
-- Writes: reconcile.notifications_seen
-- Values: :'uuid' (uuid), :'source' (text), :'source_id' (bigint), :'type' (text),
--         :'subtype' (text, null), :'transaction_id' (text, null), :'environment' (text, null),
--         :'app_account_token' (uuid, null), :'signed_date' (timestamptz, null),
--         :'product_id' (text, null), :'product_type' (text, null: SPEC's spelling, as
--         apple_transactions.product_type).
WITH inserted AS (
    INSERT INTO reconcile.notifications_seen
        (notification_uuid, source, source_id, notification_type, subtype, transaction_id, environment,
         app_account_token, signed_date, product_id, product_type)
    VALUES (:'uuid'::uuid, :'source'::text, :'source_id'::bigint, :'type'::text, :'subtype'::text,
            :'transaction_id'::text, :'environment'::text, :'app_account_token'::uuid, :'signed_date'::timestamptz,
            :'product_id'::text, :'product_type'::text)
    ON CONFLICT (notification_uuid) DO NOTHING
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM inserted)
    OR EXISTS (SELECT 1 FROM reconcile.notifications_seen
                WHERE notification_uuid = :'uuid'::uuid AND source = :'source'::text
                  AND source_id = :'source_id'::bigint);
