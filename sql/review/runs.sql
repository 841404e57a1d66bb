-- The latest nightly and ad-hoc runs, newest first; the desk's lookups, recorded as runs of kind
-- `lookup` (migration 0008), are not among them.
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: :'limit' (bigint).
SELECT * FROM reconcile.runs WHERE kind = 'run' ORDER BY id DESC LIMIT :'limit'::bigint;
