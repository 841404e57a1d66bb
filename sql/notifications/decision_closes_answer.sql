-- Apple's decision on a refund request (a first-seen REFUND or REFUND_DECLINED) closes the answer
-- given to it; a later request is a new one.
-- Reads:  nothing.
-- Writes: reconcile.consumption_answers
-- Values: :'transaction_id' (text), :'outcome' (text: refunded or declined),
--         :'signed_date' (timestamptz, null: when Apple decided).
UPDATE reconcile.consumption_answers
   SET outcome = :'outcome'::text, decided_at = :'signed_date'::timestamptz, updated_at = now()
 WHERE transaction_id = :'transaction_id'::text AND outcome IS NULL
   AND requested_at <= coalesce(:'signed_date'::timestamptz, now());
