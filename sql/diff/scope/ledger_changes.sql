-- Stage: scope of a window run, the ledger's changes since the last finished run.
-- Reads:  reconcile.ledger_changes
-- Writes: diff_scope
-- Values: :'ledger_changes_after' (pg_snapshot) — the snapshot the last finished run's diff
--         started from (reconcile.runs.ledger_change_snapshot; '1:1:', nothing committed, for none).
--
-- SPEC section 5: a nightly run judges every delivery that entered or changed in the ledger
-- since the previous run, whatever its delivered_at (a backfill, a lagging replica, a grant made
-- by hand and backdated before the window). The triggers of migrations/0009_ledger_changes.sql
-- note each change with its writer's transaction; a changes table without them (an operator's own
-- deliveries relation without the triggers) stays empty and the window judges by delivered_at.
--
-- The changes that snapshot shows as not yet committed: at or past its xmin (the index; a bound
-- value, so that the planner sees how few rows lie past it), and not visible in it.
INSERT INTO diff_scope (transaction_id)
SELECT transaction_id FROM reconcile.ledger_changes
 WHERE changed_xact >= pg_snapshot_xmin(:'ledger_changes_after'::pg_snapshot)::text::bigint
   AND NOT pg_visible_in_snapshot(changed_xact::text::xid8, :'ledger_changes_after'::pg_snapshot)
ON CONFLICT DO NOTHING;
