-- An item, locked for a transition until the transaction ends.
-- Reads:  reconcile.review_items
-- Writes: nothing (locks the row).
-- Values: :'id' (bigint).
SELECT * FROM reconcile.review_items WHERE id = :'id'::bigint FOR UPDATE;
