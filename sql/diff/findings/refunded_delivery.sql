-- Finding: refunded_delivery (medium, revoke) — Apple revoked or refunded the transaction, and a
-- delivery is not revoked.
-- Reads:  diff_key, diff_key_dl
-- Writes: diff_findings (fingerprint refunded_delivery:<transaction>; user_id: the account of the
--         first unrevoked delivery)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date)
SELECT 'refunded_delivery:' || k.transaction_id AS fingerprint, 'refunded_delivery' AS kind, k.transaction_id,
       k.original_transaction_id, d.first_user_id AS user_id, k.product_id, k.match_key,
       k.price_milli * k.quantity AS amount_milli, k.currency, k.purchase_date
  FROM diff_key k JOIN diff_key_dl d ON d.match_key = k.match_key
 WHERE k.key_judged AND k.counted AND k.key_revoked;
