-- Fresh statistics of the tables one night's new work went into.
-- Reads:  reconcile.receipt_uploads, reconcile.deliveries, reconcile.account_tokens
-- Writes: their statistics
-- Values: none.
ANALYZE reconcile.receipt_uploads, reconcile.deliveries, reconcile.account_tokens;
