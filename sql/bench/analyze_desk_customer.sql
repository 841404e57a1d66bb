-- Fresh statistics of the white table after the desk's customer was planted.
-- Reads:  reconcile.apple_transactions
-- Writes: its statistics
-- Values: none.
ANALYZE reconcile.apple_transactions;
