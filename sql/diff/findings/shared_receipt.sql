-- Finding: shared_receipt (medium, investigate) — the same transaction uploaded by two or more
-- accounts.
-- Reads:  diff_tx, diff_buyer
-- Writes: diff_findings (fingerprint shared_receipt:<transaction>; user_id: the buyer if a
--         binding names one; no amount)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, purchase_date)
SELECT 'shared_receipt:' || t.transaction_id AS fingerprint, 'shared_receipt' AS kind, t.transaction_id,
       t.original_transaction_id, b.buyer AS user_id, t.product_id, t.match_key, t.purchase_date
  FROM diff_tx t JOIN diff_buyer b ON b.transaction_id = t.transaction_id
 WHERE t.judged AND b.uploaders >= 2;
