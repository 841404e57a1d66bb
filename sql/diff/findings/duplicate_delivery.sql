-- Finding: duplicate_delivery (medium, revoke) — two or more unrevoked deliveries for one key
-- (for a non-consumable: for one original transaction).
-- Reads:  diff_key, diff_key_dl
-- Writes: diff_findings (fingerprint duplicate_delivery:<transaction>; user_id: the account of
--         the latest delivery; amount: every delivery past the first)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date)
SELECT 'duplicate_delivery:' || k.transaction_id AS fingerprint, 'duplicate_delivery' AS kind, k.transaction_id,
       k.original_transaction_id, d.latest_user_id AS user_id, k.product_id, k.match_key,
       k.price_milli * (d.deliveries - 1) AS amount_milli, k.currency, k.purchase_date
  FROM diff_key k JOIN diff_key_dl d ON d.match_key = k.match_key
 WHERE k.key_judged AND k.counted AND d.deliveries >= 2;
