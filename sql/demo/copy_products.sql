-- The demo game's catalogue, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.products
-- Values: none.
COPY reconcile.products (product_id, product_type, price_milli, currency) FROM STDIN;
