-- One night's credits, loaded by COPY: `store` is `google_play` for a Play order (`GPA.…`) and
-- null for Apple's, as the history's rows (reconcile.ledger_store decides by the id's form).
-- Reads:  nothing.
-- Writes: reconcile.deliveries
-- Values: none.
COPY reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at, revoked_at, store) FROM STDIN;
