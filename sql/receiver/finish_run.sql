-- Stage: what a receiver pass did, on its run row.
-- Reads:  nothing
-- Writes: reconcile.runs
-- Values: :'run_id' (bigint), :'findings_total' (integer) — findings its judgement made or saw
--         again; :'findings_new' (integer) — review items it opened; :'counts' (jsonb) — the
--         pass's own counts (notifications applied, answers, transactions judged).
UPDATE reconcile.runs
   SET finished_at = now(), findings_total = :'findings_total'::integer, findings_new = :'findings_new'::integer,
       counts = :'counts'::jsonb
 WHERE id = :'run_id'::bigint;
