-- Finding: wrong_account (high, move) — the buyer is known and an unrevoked delivery went to
-- another account. A buyer known only as the one uploader is not known while the credited
-- account has an upload still being verified: that upload may carry the transaction too, which
-- makes the buyer unknown (SPEC sections 3 and 5: what depends on a retrying upload waits).
-- Reads:  diff_key, diff_buyer, diff_dl, diff_pending_users
-- Writes: diff_findings (fingerprint wrong_account:<transaction>:<md5 of the delivery's account>,
--         one per wrongly credited account; user_id: the buyer; revoke_from_user_id: that account,
--         whose delivery a move takes back and which holds the finding back while it has an
--         upload pending)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date, revoke_from_user_id,
                           held_by_user_id)
SELECT DISTINCT ON (k.transaction_id, d.user_id)
       'wrong_account:' || k.transaction_id || ':' || md5(d.user_id) AS fingerprint, 'wrong_account' AS kind,
       k.transaction_id, k.original_transaction_id, b.buyer AS user_id, k.product_id, k.match_key,
       k.price_milli AS amount_milli, k.currency, k.purchase_date, d.user_id AS revoke_from_user_id,
       d.user_id AS held_by_user_id
  FROM diff_key k
  JOIN diff_buyer b ON b.transaction_id = k.transaction_id
  JOIN diff_dl d ON d.match_key = k.match_key AND d.revoked_at IS NULL
 WHERE k.key_judged AND k.counted AND b.buyer IS NOT NULL AND d.user_id <> b.buyer
   AND NOT (b.basis = 'uploader' AND EXISTS (SELECT 1 FROM diff_pending_users q WHERE q.user_id = d.user_id));
