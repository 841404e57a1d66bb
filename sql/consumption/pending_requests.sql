-- Apple's refund requests (CONSUMPTION_REQUEST, SPEC section 14) no answer has taken into account
-- yet, oldest first.
-- Reads:  reconcile.notifications_seen, reconcile.consumption_answers
-- Writes: nothing.
-- Values: none.
SELECT s.notification_uuid, s.transaction_id, coalesce(s.environment, 'Production'),
       coalesce(s.signed_date, s.seen_at), s.app_account_token, s.product_id, s.product_type
  FROM reconcile.notifications_seen s
 WHERE s.notification_type = 'CONSUMPTION_REQUEST' AND s.transaction_id IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM reconcile.consumption_answers c
                    WHERE c.request_uuids @> ARRAY[s.notification_uuid])
 ORDER BY 4, 1;
