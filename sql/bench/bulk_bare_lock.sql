-- reconcile-bench bulk's yardstick, one item decided by hand in a transaction of its own (1 of 4):
-- the item locked, with what its grant needs.
-- Reads:  reconcile.review_items
-- Writes: nothing (locks the row).
-- Values: :'id' (bigint).
SELECT transaction_id, grant_to_user_id, grant_product_id, grant_quantity
  FROM reconcile.review_items
 WHERE id = :'id'::bigint
   FOR UPDATE;
