-- Stage: session — the diff's transaction settings (they end with the transaction).
-- Reads:  nothing.
-- Writes: work_mem, jit (SET LOCAL, through set_config(…, true)).
-- Values: :'work_mem' (text: memory for each hash or sort, Differ.workMem).
--
-- The whole-history pass hashes millions of rows, which spill to disk in batches at the server's
-- usual 4 MB. JIT compiling takes half a second per statement whose estimate looks big, which
-- temporary tables of a few thousand rows do before they are analysed; no statement here gains
-- it back.
SELECT set_config('work_mem', :'work_mem'::text, true) AS work_mem, set_config('jit', 'off', true) AS jit;
