-- Stage: dl — the ledger's deliveries in scope, with the key they match.
-- Reads:  diff_scope, diff_tx, :deliveries
-- Writes: diff_dl (one row per delivery; match_key NULL when Apple's transaction is not in diff_tx)
-- Values: none.
CREATE TEMP TABLE diff_dl ON COMMIT DROP AS
SELECT d.id, d.transaction_id, d.user_id, d.product_id, d.quantity, d.delivered_at, d.revoked_at,
       t.match_key
  FROM :deliveries d
  JOIN diff_scope s ON s.transaction_id = d.transaction_id
  LEFT JOIN diff_tx t ON t.transaction_id = d.transaction_id;

CREATE INDEX ON diff_dl (match_key);
ANALYZE diff_dl;
