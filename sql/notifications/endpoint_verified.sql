-- Stored notifications that verified, a batch in one statement: each applied, or a duplicate of a
-- notificationUUID another copy brought first.
-- Reads:  nothing.
-- Writes: reconcile.notification_verifications
-- Values: one array element per notification: :'ids' (bigint[]: the notifications), :'states'
--         (text[]: applied or duplicate), :'uuids' (uuid[]), :'types' (text[]), :'subtypes' (text[]),
--         :'transaction_ids' (text[]), :'signed_dates' (timestamptz[]), nulls where a notification has
--         no such value; :'run_id' (bigint).
INSERT INTO reconcile.notification_verifications
    (notification_id, state, notification_uuid, notification_type, subtype, transaction_id, signed_date, run_id)
SELECT v.*, :'run_id'::bigint
  FROM unnest(:'ids'::bigint[], :'states'::text[], :'uuids'::uuid[], :'types'::text[], :'subtypes'::text[],
              :'transaction_ids'::text[], :'signed_dates'::timestamptz[]) AS v
ON CONFLICT (notification_id) DO UPDATE SET state = EXCLUDED.state,
    notification_uuid = EXCLUDED.notification_uuid, notification_type = EXCLUDED.notification_type,
    subtype = EXCLUDED.subtype, transaction_id = EXCLUDED.transaction_id,
    signed_date = EXCLUDED.signed_date, run_id = EXCLUDED.run_id, error = NULL, updated_at = now();
