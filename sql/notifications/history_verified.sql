-- A stored Notification History body that verified: accepted (its transaction is applied by the
-- next run), applied (it carries none), or a duplicate of a notificationUUID seen before.
-- Reads:  nothing.
-- Writes: reconcile.notification_history
-- Values: :'id' (bigint), :'state' (text), :'uuid' (uuid), :'type' (text), :'subtype' (text, null),
--         :'transaction_id' (text, null), :'signed_date' (timestamptz, null).
UPDATE reconcile.notification_history
   SET state = :'state'::text, notification_uuid = :'uuid'::uuid, notification_type = :'type'::text,
       subtype = :'subtype'::text, transaction_id = :'transaction_id'::text, signed_date = :'signed_date'::timestamptz
 WHERE id = :'id'::bigint;
