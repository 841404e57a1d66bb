-- Records Look Up Order ID's answer: the order is valid and holds these transactions (stored in
-- the white table by the same transaction).
-- Reads:  reconcile.order_lookups, reconcile.order_transactions
-- Writes: reconcile.order_lookups (status 'valid'), reconcile.order_transactions
-- Values: :'order_id' (text), :'run_id' (bigint: the lookup's run),
--         :'transaction_ids' (text[]: the transactions Apple listed).
INSERT INTO reconcile.order_lookups (order_id, status, run_id) VALUES (:'order_id'::text, 'valid', :'run_id'::bigint)
ON CONFLICT (order_id) DO UPDATE SET status = 'valid', run_id = EXCLUDED.run_id, checked_at = now();

INSERT INTO reconcile.order_transactions (order_id, transaction_id)
SELECT :'order_id'::text, unnest(:'transaction_ids'::text[]) ON CONFLICT DO NOTHING;
