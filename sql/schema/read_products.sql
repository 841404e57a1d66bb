-- Reads no row but every column the job reads from the catalogue (Preflight.requiredColumns):
-- fails when the job's role may not read them.
-- Reads:  :products
-- Writes: nothing.
-- Values: none.
SELECT product_id, product_type, price_milli, currency
  FROM :products LIMIT 0;
