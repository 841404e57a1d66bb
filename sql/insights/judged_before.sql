-- Stage: span — how far the judgement reaches: the last finished nightly run, and the instant
-- before which it judged purchases (its start less the grace period: SPEC section 5, a purchase
-- younger than the grace was left for the next run). Nothing was judged when no run finished.
-- Reads:  reconcile.runs
-- Writes: nothing.
-- Values: :'grace_seconds' (double precision: RECONCILE_GRACE in seconds).
-- Returns: run_id, judged_before (no row when no nightly run finished; dry runs wrote no queue).
SELECT id AS run_id, started_at - make_interval(secs => :'grace_seconds'::double precision) AS judged_before
  FROM reconcile.runs
 WHERE kind = 'run' AND status IN ('completed', 'completed_with_unresolved') AND NOT dry_run
 ORDER BY id DESC
 LIMIT 1;
