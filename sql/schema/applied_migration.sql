-- The newest migration applied to the database (0 when none).
-- Reads:  reconcile.schema_migrations
-- Writes: nothing.
-- Values: none.
SELECT coalesce(max(version), 0) FROM reconcile.schema_migrations;
