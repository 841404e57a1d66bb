-- Which of the candidates the diff just judged (Differ.computeFindings over exactly their orders,
-- in this transaction) the ledger delivered to its buyer: an unrevoked delivery matching the order
-- (sql/diff/32_dl.sql's match_key) to the account sql/diff/43_buyer.sql resolves as its buyer (the
-- bound account, else the one uploader). A purchase with no such delivery — undelivered, delivered
-- to another account, or whose buyer is unknown — is never acknowledged. Judged only (the package
-- accepted, older than the grace period, paid, no upload of it still being verified).
-- Reads:  diff_tx, diff_buyer, diff_dl
-- Writes: nothing.
-- Values: none.
-- Returns: transaction_id (one row per delivered order).
SELECT DISTINCT t.transaction_id
  FROM diff_tx t
  JOIN diff_buyer b ON b.transaction_id = t.transaction_id AND b.buyer IS NOT NULL
  JOIN diff_dl d ON d.match_key = t.match_key AND d.revoked_at IS NULL AND d.user_id = b.buyer
 -- refunded_quantity: 0 unrevoked, every unit when voided whole (30_tx.sql).
 WHERE t.store = 'google_play' AND t.judged AND t.refunded_quantity < t.quantity;
