-- Finding: missed_delivery (high, grant) — Apple confirms a paid, unrevoked transaction in a
-- counted environment; no unrevoked delivery matches.
-- Reads:  diff_key, diff_buyer, diff_key_dl
-- Writes: diff_findings (fingerprint missed_delivery:<transaction>; user_id: the buyer)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date)
SELECT 'missed_delivery:' || k.transaction_id AS fingerprint, 'missed_delivery' AS kind, k.transaction_id,
       k.original_transaction_id, b.buyer AS user_id, k.product_id, k.match_key,
       k.price_milli AS amount_milli, k.currency, k.purchase_date
  FROM diff_key k JOIN diff_buyer b ON b.transaction_id = k.transaction_id
 WHERE k.key_judged AND k.counted AND NOT k.key_revoked
   AND coalesce(k.ownership_type, 'PURCHASED') = 'PURCHASED'
   AND NOT EXISTS (SELECT 1 FROM diff_key_dl d WHERE d.match_key = k.match_key);
