-- Finding: product_mismatch (medium, investigate) — an unrevoked delivery names another product
-- than Apple's transaction.
-- Reads:  diff_tx, diff_dl
-- Writes: diff_findings (fingerprint product_mismatch:<transaction>:<delivery id>; user_id: the
--         delivery's account; no amount)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, purchase_date)
SELECT 'product_mismatch:' || t.transaction_id || ':' || d.id AS fingerprint, 'product_mismatch' AS kind,
       t.transaction_id, t.original_transaction_id, d.user_id, t.product_id, t.match_key, t.purchase_date
  FROM diff_tx t JOIN diff_dl d ON d.transaction_id = t.transaction_id AND d.revoked_at IS NULL
 WHERE t.judged AND t.counted AND d.product_id <> t.product_id;
