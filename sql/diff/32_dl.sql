-- Stage: dl — the ledger's deliveries in scope, with the key they match.
-- Reads:  diff_scope, diff_tx, :deliveries
-- Writes: diff_dl (one row per delivery; match_key NULL when Apple's transaction is not in diff_tx)
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS diff_dl (
    id bigint, transaction_id text, user_id text, product_id text, quantity integer,
    delivered_at timestamptz, revoked_at timestamptz, match_key text
) ON COMMIT DELETE ROWS;
CREATE INDEX IF NOT EXISTS diff_dl_match_key ON diff_dl (match_key);

INSERT INTO diff_dl (id, transaction_id, user_id, product_id, quantity, delivered_at, revoked_at, match_key)
SELECT d.id, d.transaction_id, d.user_id, d.product_id, d.quantity, d.delivered_at, d.revoked_at,
       t.match_key
  FROM :deliveries d
  JOIN diff_scope s ON s.transaction_id = d.transaction_id
  LEFT JOIN diff_tx t ON t.transaction_id = d.transaction_id;

ANALYZE diff_dl;
