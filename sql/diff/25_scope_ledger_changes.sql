-- Stage: scope of a window run, the ledger's changes since the last finished run.
-- Reads:  reconcile.ledger_changes
-- Writes: diff_scope
-- Values: :'ledger_changes_from' (bigint) — the mark of the last finished run
--         (reconcile.runs.ledger_change_mark, 0 for none): the oldest transaction then in progress.
--
-- SPEC section 5: a nightly run judges every delivery that entered or changed in the ledger
-- since the previous run, whatever its delivered_at (a backfill, a lagging replica, a grant made
-- by hand and backdated before the window). The triggers of migrations/0009_ledger_changes.sql
-- note each change with its writer's transaction; a changes table without them (an operator's own
-- deliveries relation without the triggers) stays empty and the window judges by delivered_at.
-- The mark is a bound value, so that the planner sees how few rows lie past it.
INSERT INTO diff_scope (transaction_id)
SELECT transaction_id FROM reconcile.ledger_changes
 WHERE changed_xact >= :'ledger_changes_from'::bigint
ON CONFLICT DO NOTHING;
