-- The transactions of an order the desk looked up before (Look Up Order ID's answer), at most
-- :'most' of them.
-- Reads:  reconcile.order_transactions
-- Writes: nothing.
-- Values: :'order_id' (text), :'most' (integer: DeskService.maximumTransactions).
SELECT transaction_id FROM reconcile.order_transactions
 WHERE order_id = :'order_id'::text
 ORDER BY 1 LIMIT :'most'::integer;
