-- Apple's decisions on refund requests about a transaction (REFUND, REFUND_DECLINED) taken into
-- account so far, oldest first: each closes the answers given before it
-- (notifications/decision_closes_answer.sql), also one recorded after the decision arrived, and a
-- request Apple decided before it was answered is not answered (SPEC section 14: a request after a
-- decision is a new one).
-- Reads:  reconcile.notifications_seen
-- Writes: nothing.
-- Values: :'transaction_id' (text).
SELECT s.notification_type, coalesce(s.signed_date, s.seen_at) AS signed_date
  FROM reconcile.notifications_seen s
 WHERE s.notification_type IN ('REFUND', 'REFUND_DECLINED') AND s.transaction_id = :'transaction_id'::text
 ORDER BY 2, s.notification_uuid;
