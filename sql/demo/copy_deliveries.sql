-- The ledger the demo game's backend wrote, accidents included, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.deliveries
-- Values: none.
COPY reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at, revoked_at, store) FROM STDIN;
