-- The claims' trigger (migrations 0011 and 0013) reads and writes the rows of the transactions a
-- statement's claims belong to: a batch of keys. It is now planned to reach them through the keys'
-- indexes whatever the statistics say. On a young database (a deployment's first runs, and every
-- database the bench verifies receipts in) the white table and the claims have no statistics yet
-- and look empty to the planner, which then read both whole for every batch of claims the job
-- recorded: the trigger's time grew with the table, to 3.2 s of PostgreSQL's time for 8,000
-- claims in batches of 190, against 0.23 s by the indexes (docs/benchmarks.md, 2026-11-27).
-- The TRUNCATE branch, which clears every row, has no index to prefer and is planned as before. A
-- later migration that redefines the function with CREATE OR REPLACE must set this again.
ALTER FUNCTION reconcile.note_claim_changes() SET enable_seqscan = off;
