-- What the policies decided in each of some runs (a nightly run, or a pass of the notification
-- receiver), by rule and currency, from their events (each item once): the report's `policies`
-- and the runs page.
-- Reads:  reconcile.review_events, reconcile.review_items
-- Writes: nothing.
-- Values: :'run_ids' (bigint[]).
-- Returns: one row per run, rule and currency (null: items of unknown value): run_id, rule,
--          currency, items, amount_milli.
SELECT d.run_id, substr(d.actor, length('policy:') + 1) AS rule, i.currency, count(*)::integer AS items,
       coalesce(sum(i.amount_milli), 0)::bigint AS amount_milli
  FROM (SELECT DISTINCT e.run_id, e.actor, e.review_item_id
          FROM reconcile.review_events e
         WHERE e.run_id = ANY (:'run_ids'::bigint[]) AND e.actor LIKE 'policy:%') AS d
  JOIN reconcile.review_items i ON i.id = d.review_item_id
 GROUP BY d.run_id, d.actor, i.currency
 ORDER BY d.run_id, rule, i.currency NULLS LAST;
