-- How big the scope is, once its stages filled it (before the non-consumables' families):
-- narrow — a sliver of the history (a nightly window, or the few percent of a whole history the
-- first pass cannot prove clean): under a twentieth of the white table's rows, by the planner's
-- own estimate of its size; then the steps DiffPlan marks run by index;
-- analyse — whether the stages run what only informs the planner (ANALYZE, indexes that are not
-- unique; DiffPlan.firstJudgingStep says why). Not for a few hundred transactions (a quiet night,
-- most of the support desk's customers). Nor when this connection's work tables already hold
-- statistics of a scope of about this size (half to twice): they outlive each diff
-- (checks/work_tables.sql), and ANALYZE of diff_scope (scope/families.sql) leaves the size it
-- counted in pg_class.reltuples, which emptying the table at commit does not reset and a rolled
-- back ANALYZE takes back (-1 before the first). The desk's lookups of one connection analysed
-- the same sizes every time. Plans only: what the statements return is the same either way.
-- Reads:  diff_scope, pg_class
-- Writes: nothing.
-- Values: none.
SELECT n * 20 < (SELECT reltuples FROM pg_class WHERE oid = 'reconcile.apple_transactions'::regclass) AS narrow,
       n >= 500 AND NOT coalesce((SELECT c.reltuples BETWEEN n / 2.0 AND n * 2.0 FROM pg_class c
                                   WHERE c.oid = 'pg_temp.diff_scope'::regclass), false) AS analyse
  FROM (SELECT count(*) AS n FROM diff_scope) AS scope;
