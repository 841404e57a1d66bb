-- The trends' nightly series (SPEC section 19): for each UTC day of the span, the day's last
-- finished run that is not a dry run (its window's end in the day), with its open items and what
-- it kept for the trends (migration 0036), and the findings first opened by that day's runs.
-- Reads:  reconcile.runs, reconcile.review_items
-- Writes: nothing
-- Values: :'since' and :'until' (timestamptz): the span, days from since's UTC day to until's;
--         :'before_run' (bigint): only runs before it (report.html: the runs before its own).
-- Returns: day (timestamptz: the UTC day's midnight), run_id, open_items (integer), trends (jsonb as text), new_by_kind (jsonb as
--          text: {"missed_delivery": 2, …}), one row per day that has a run.
WITH runs AS (
    SELECT DISTINCT ON ((r.window_until AT TIME ZONE 'UTC')::date)
           (r.window_until AT TIME ZONE 'UTC')::date AS day, r.id, r.findings_total, r.trends
      FROM reconcile.runs r
     WHERE r.status IN ('completed', 'completed_with_unresolved') AND NOT r.dry_run
       AND r.window_until >= :'since'::timestamptz AND r.window_until <= :'until'::timestamptz
       AND r.id < :'before_run'::bigint
     ORDER BY (r.window_until AT TIME ZONE 'UTC')::date, r.window_until DESC, r.id DESC
), opened AS (
    SELECT (r.window_until AT TIME ZONE 'UTC')::date AS day, i.kind, count(*)::integer AS n
      FROM reconcile.review_items i
      JOIN reconcile.runs r ON r.id = i.first_seen_run
     WHERE r.window_until >= :'since'::timestamptz AND r.window_until <= :'until'::timestamptz
       AND r.id < :'before_run'::bigint AND NOT r.dry_run
     GROUP BY 1, 2
)
SELECT runs.day::timestamp AT TIME ZONE 'UTC' AS day, runs.id AS run_id, runs.findings_total AS open_items, runs.trends::text AS trends,
       coalesce((SELECT jsonb_object_agg(o.kind, o.n) FROM opened o WHERE o.day = runs.day), '{}')::text
           AS new_by_kind
  FROM runs
 ORDER BY runs.day;
