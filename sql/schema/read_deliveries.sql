-- Reads no row but every column the job reads from the ledger (Preflight.requiredColumns): fails
-- when the job's role may not read them.
-- Reads:  :deliveries
-- Writes: nothing.
-- Values: none.
SELECT id, transaction_id, user_id, product_id, quantity, delivered_at, revoked_at
  FROM :deliveries LIMIT 0;
