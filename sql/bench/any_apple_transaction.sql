-- A row when the white table holds any transaction: the history is generated into an empty one.
-- Reads:  reconcile.apple_transactions
-- Writes: nothing.
-- Values: none.
SELECT 1 FROM reconcile.apple_transactions LIMIT 1;
