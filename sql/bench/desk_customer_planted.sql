-- Whether the desk's bench customer was planted already (by an earlier `reconcile-bench desk`).
-- Reads:  reconcile.receipt_uploads
-- Writes: nothing.
-- Values: :'user_id' (text: the planted customer).
SELECT 1 FROM reconcile.receipt_uploads WHERE user_id = :'user_id'::text LIMIT 1;
