-- A row when the demo's players were seeded already: seeding twice is a no-op.
-- Reads:  reconcile.receipt_uploads
-- Writes: nothing.
-- Values: none.
SELECT 1 FROM reconcile.receipt_uploads WHERE user_id LIKE 'player-%' LIMIT 1;
