-- A coin pack of the night's purchases in the catalogue, unless it is there already.
-- Reads:  reconcile.products
-- Writes: reconcile.products
-- Values: :'product_id' (text), :'price_milli' (bigint).
INSERT INTO reconcile.products (product_id, product_type, price_milli, currency)
VALUES (:'product_id'::text, 'consumable', :'price_milli'::bigint, 'CNY') ON CONFLICT (product_id) DO NOTHING;
