-- Records the run as finished; a finished run that wrote the queue prunes, in the same
-- statement, the ledger changes its diff's snapshot showed as committed (it saw them all), then
-- the account tokens' changes alike (migration 0012).
--
-- The prunes read the index on changed_xact between two bounds rather than the whole table:
-- every change the snapshot shows is older than its xmax, and every change older than the
-- previous finished run's xmin was committed before that run's snapshot, which pruned it.
-- Without them a night read the whole table, or the index's dead entries, left by the last bulk
-- prune (the full-size bench's 5M deliveries: 0.3-0.9 s of a nothing-new night).
-- Reads:  reconcile.runs, reconcile.ledger_changes, reconcile.token_changes
-- Writes: reconcile.runs (the run's status, counts, timings and trends), reconcile.ledger_changes and
--         reconcile.token_changes (pruned)
-- Values: :'run_id' (bigint), :'status' (text), :'finished_at' (timestamptz),
--         :'uploads_total', :'uploads_verified', :'uploads_invalid', :'uploads_retry',
--         :'findings_total', :'findings_new' (integer), :'counts', :'timings' and :'trends' (jsonb),
--         :'report_dir' (text, or null).
WITH finished AS (
  UPDATE reconcile.runs
     SET status = :'status'::text, finished_at = :'finished_at'::timestamptz,
         uploads_total = :'uploads_total'::integer, uploads_verified = :'uploads_verified'::integer,
         uploads_invalid = :'uploads_invalid'::integer, uploads_retry = :'uploads_retry'::integer,
         findings_total = :'findings_total'::integer, findings_new = :'findings_new'::integer,
         counts = :'counts'::jsonb, timings = :'timings'::jsonb, trends = :'trends'::jsonb,
         report_dir = :'report_dir'::text
   WHERE id = :'run_id'::bigint
 RETURNING ledger_change_snapshot, dry_run),
previous AS (
  -- The xmin of the last finished run before this one (0 when none): every change noted below
  -- it was pruned by that run.
  SELECT coalesce((SELECT pg_snapshot_xmin(ledger_change_snapshot)::text::bigint FROM reconcile.runs
                    WHERE id < :'run_id'::bigint AND status IN ('completed', 'completed_with_unresolved')
                      AND NOT dry_run
                    ORDER BY id DESC LIMIT 1), 0) AS pruned_below)
DELETE FROM reconcile.ledger_changes
 WHERE changed_xact < (SELECT pg_snapshot_xmax(ledger_change_snapshot)::text::bigint FROM finished)
   AND changed_xact >= (SELECT pruned_below FROM previous)
   AND pg_visible_in_snapshot(
           changed_xact::text::xid8, (SELECT ledger_change_snapshot FROM finished WHERE NOT dry_run));

WITH previous AS (
  SELECT coalesce((SELECT pg_snapshot_xmin(ledger_change_snapshot)::text::bigint FROM reconcile.runs
                    WHERE id < :'run_id'::bigint AND status IN ('completed', 'completed_with_unresolved')
                      AND NOT dry_run
                    ORDER BY id DESC LIMIT 1), 0) AS pruned_below)
DELETE FROM reconcile.token_changes
 WHERE changed_xact < (SELECT pg_snapshot_xmax(ledger_change_snapshot)::text::bigint
                         FROM reconcile.runs WHERE id = :'run_id'::bigint)
   AND changed_xact >= (SELECT pruned_below FROM previous)
   AND pg_visible_in_snapshot(
           changed_xact::text::xid8,
           (SELECT ledger_change_snapshot FROM reconcile.runs WHERE id = :'run_id'::bigint AND NOT dry_run));
