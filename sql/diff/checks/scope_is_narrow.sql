-- Whether the scope is a sliver of the history (a nightly window, or the few percent of a whole
-- history the first pass cannot prove clean): under a twentieth of the white table's rows, by
-- the planner's own estimate of its size. Then the steps DiffPlan marks run by index.
-- Reads:  diff_scope, pg_class
-- Writes: nothing.
-- Values: none.
SELECT (SELECT count(*) FROM diff_scope) * 20
       < (SELECT reltuples FROM pg_class WHERE oid = 'reconcile.apple_transactions'::regclass);
