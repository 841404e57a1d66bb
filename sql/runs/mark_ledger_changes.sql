-- Records the snapshot the run judges from (`RunLedger.markLedgerChanges` says why it is taken
-- before the Server API stage).
-- Reads:  nothing.
-- Writes: reconcile.runs (ledger_change_snapshot)
-- Values: :'run_id' (bigint).
UPDATE reconcile.runs SET ledger_change_snapshot = pg_current_snapshot() WHERE id = :'run_id'::bigint;
