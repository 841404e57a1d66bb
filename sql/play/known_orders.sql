-- Which of a subscription's orders the white table holds already (PlaySubscriptionOrders): the
-- others are asked of orders.get.
-- Reads:  reconcile.apple_transactions
-- Writes: nothing.
-- Values: :'order_ids' (text[]).
-- Returns: transaction_id.
SELECT transaction_id FROM reconcile.apple_transactions WHERE transaction_id = ANY(:'order_ids'::text[]);
