-- An item with its evidence as text.
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: :'id' (bigint).
SELECT *, evidence::text AS evidence_text FROM reconcile.review_items WHERE id = :'id'::bigint;
