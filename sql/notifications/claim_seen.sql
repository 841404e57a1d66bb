-- Records verified notifications in the ledger of every notificationUUID (SPEC section 14), a
-- batch in one statement: for each, in the order given, true when this copy is the first of its
-- UUID (or is the copy recorded before), false for a duplicate, whichever source (the app's
-- endpoint, the receiver, Notification History) brought it. Two copies of one UUID in the batch:
-- the earlier is the first (rows are inserted in the order given; ON CONFLICT DO NOTHING skips a
-- row whose UUID an earlier row of the same statement inserted).
-- Reads:  reconcile.notifications_seen
-- Writes: reconcile.notifications_seen
-- Values: :'source' (text); one array element per notification, in order: :'source_ids' (bigint[]),
--         :'uuids' (uuid[]), :'types' (text[]), :'subtypes' (text[]), :'transaction_ids' (text[]),
--         :'environments' (text[]), :'app_account_tokens' (uuid[]), :'signed_dates' (timestamptz[]),
--         :'product_ids' (text[]), :'product_types' (text[]: SPEC's spelling, as
--         apple_transactions.product_type); nulls where a notification has no such value.
-- Returns: source_id, first (boolean), one row per notification in the order given.
WITH given AS (
    SELECT *
      FROM unnest(:'source_ids'::bigint[], :'uuids'::uuid[], :'types'::text[], :'subtypes'::text[],
                  :'transaction_ids'::text[], :'environments'::text[], :'app_account_tokens'::uuid[],
                  :'signed_dates'::timestamptz[], :'product_ids'::text[], :'product_types'::text[])
           WITH ORDINALITY AS g (source_id, notification_uuid, notification_type, subtype, transaction_id,
                                 environment, app_account_token, signed_date, product_id, product_type, position)
), inserted AS (
    INSERT INTO reconcile.notifications_seen
        (notification_uuid, source, source_id, notification_type, subtype, transaction_id, environment,
         app_account_token, signed_date, product_id, product_type)
    SELECT notification_uuid, :'source'::text, source_id, notification_type, subtype, transaction_id, environment,
           app_account_token, signed_date, product_id, product_type
      FROM given
     ORDER BY position
    ON CONFLICT (notification_uuid) DO NOTHING
    RETURNING source_id
)
-- The EXISTS reads the table as it was before this statement: a copy recorded by an earlier one.
SELECT g.source_id,
       g.source_id IN (SELECT source_id FROM inserted)
       OR EXISTS (SELECT 1 FROM reconcile.notifications_seen s
                   WHERE s.notification_uuid = g.notification_uuid AND s.source = :'source'::text
                     AND s.source_id = g.source_id) AS first
  FROM given g
 ORDER BY g.position;
