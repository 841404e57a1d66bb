-- Whether the diff's work tables already exist on this connection. They are temporary tables that
-- live as long as the connection and empty at every commit (ON COMMIT DELETE ROWS): each stage
-- declares its own with CREATE … IF NOT EXISTS, and a runner that finds them here skips those
-- declarations. Creating, indexing and dropping some twenty tables per diff was a fifth of the
-- support desk's lookup (docs/benchmarks.md). diff_findings stands for them all: every plan
-- declares it after the others, in the same transaction, so if it was committed they all were.
-- empty: no diff has filled the work tables in this transaction yet (a diff runs once per
-- transaction: its rows would otherwise mix with the last one's).
-- Reads:  pg_class (the session's temporary schema)
-- Writes: nothing.
-- Values: none.
SELECT to_regclass('pg_temp.diff_findings') IS NOT NULL AS declared,
       coalesce(pg_relation_size(to_regclass('pg_temp.diff_scope')), 0) = 0 AS empty;
