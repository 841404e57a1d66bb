-- Stage: session — the diff's transaction settings (they end with the transaction).
-- Reads:  nothing.
-- Writes: work_mem, jit, random_page_cost (SET LOCAL, through set_config(…, true)).
-- Values: :'work_mem' (text: memory for each hash or sort, Differ.workMem),
--         :'random_page_cost' (text: Differ.randomPageCost).
--
-- The stages after the scope hash the scope's rows, up to a few hundred thousand, in memory;
-- the whole history's two passes over the whole tables set their own (scope/whole_history.sql).
-- JIT compiling takes half a second per statement whose estimate looks big, which
-- temporary tables of a few thousand rows do before they are analysed; no statement here gains
-- it back.
--
-- The stages after the scope join a scope of a few percent of the history with the white table,
-- the ledger and the claims. Priced at the server's usual random_page_cost (4, a spinning disk's),
-- the planner reads those 5M-row tables whole where probing their indexes for the scope's rows
-- takes half the time or less (families 1.7 → 1.0 s, tx 1.6 → 1.0 s, the accounts a binding names
-- 2.4 → 0.8 s at 5M: docs/benchmarks.md, twelfth session). The tables' pages are in memory or on
-- an SSD on any server that holds them; 1.1 is what PostgreSQL's documentation suggests there.
SELECT set_config('work_mem', :'work_mem'::text, true) AS work_mem, set_config('jit', 'off', true) AS jit,
       set_config('random_page_cost', :'random_page_cost'::text, true) AS random_page_cost;
