-- The snapshot of the last finished run ('1:1:', nothing committed, when there is none).
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: :'resumes_after' (bigint: the last finished run).
SELECT coalesce((SELECT ledger_change_snapshot::text FROM reconcile.runs WHERE id = :'resumes_after'::bigint),
                '1:1:');
