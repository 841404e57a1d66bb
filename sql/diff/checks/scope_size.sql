-- How big the scope is, once its stages filled it (before the non-consumables' families):
-- narrow — a sliver of the history (a nightly window, or the few percent of a whole history the
-- first pass cannot prove clean): under a twentieth of the white table's rows, by the planner's
-- own estimate of its size; then the steps DiffPlan marks run by index;
-- small — a few hundred transactions (a quiet night, most of the support desk's customers): then
-- the stages skip what only informs the planner, ANALYZE and indexes that are not unique
-- (DiffPlan.firstJudgingStep says why).
-- Reads:  diff_scope, pg_class
-- Writes: nothing.
-- Values: none.
SELECT n * 20 < (SELECT reltuples FROM pg_class WHERE oid = 'reconcile.apple_transactions'::regclass) AS narrow,
       n < 500 AS small
  FROM (SELECT count(*) AS n FROM diff_scope) AS scope;
