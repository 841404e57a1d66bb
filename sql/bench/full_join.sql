-- The yardstick of SPEC section 12: one hand-written FULL JOIN of the white table against the
-- ledger that keeps every row where the two disagree, as a person reconciling by hand would write
-- it. It materialises its result, as the diff materialises its findings; the table goes at commit.
-- Reads:  reconcile.apple_transactions, reconcile.deliveries
-- Writes: bench_full_join (dropped at commit)
-- Values: none.
CREATE TEMP TABLE bench_full_join ON COMMIT DROP AS
SELECT a.transaction_id AS apple_transaction_id, d.transaction_id AS delivered_transaction_id, d.user_id,
       a.product_id AS apple_product_id, d.product_id AS delivered_product_id,
       a.quantity AS apple_quantity, d.quantity AS delivered_quantity, a.revocation_date, d.revoked_at
  FROM reconcile.apple_transactions a
  FULL JOIN reconcile.deliveries d ON d.transaction_id = a.transaction_id
 WHERE a.transaction_id IS NULL OR d.transaction_id IS NULL
    OR a.product_id <> d.product_id OR a.quantity <> d.quantity
    OR (a.revocation_date IS NOT NULL AND d.revoked_at IS NULL);
