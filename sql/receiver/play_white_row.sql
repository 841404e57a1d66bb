-- Stage: what the white table already holds of a Play order, so that an answer of the Developer
-- API about its token keeps the purchase's own time and product (the signed purchaseData's).
-- Reads:  reconcile.apple_transactions
-- Writes: nothing
-- Values: :'transaction_id' (text).
-- Returns: purchase_date, product_id, product_type (no row when the table has no such order).
SELECT purchase_date, product_id, product_type
  FROM reconcile.apple_transactions
 WHERE transaction_id = :'transaction_id'::text AND store = 'google_play';
