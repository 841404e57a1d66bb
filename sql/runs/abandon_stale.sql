-- Runs still recorded as running while the caller holds the run lock died without saying so
-- (kill -9, power loss): they are failed.
-- Reads:  reconcile.runs
-- Writes: reconcile.runs (status, finished_at, error)
-- Values: none.
UPDATE reconcile.runs SET status = 'failed', finished_at = now(),
       error = 'the process ended without finishing the run (killed, or the machine stopped)'
 WHERE status = 'running';
