-- Whether the job's schema has its migrations table: on a database never migrated, reading the
-- table would fail at plan time (applied_migration.sql runs only when it exists).
-- Reads:  the catalog
-- Writes: nothing.
-- Values: none.
SELECT to_regclass('reconcile.schema_migrations') IS NOT NULL;
