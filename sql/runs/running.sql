-- The newest run still recorded as running, if any (`RunLedger.runningRun`).
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: none.
SELECT id, started_at, host, pid FROM reconcile.runs WHERE status = 'running' ORDER BY id DESC LIMIT 1;
