-- Stage: the receiver's latest passes that applied or judged something, for the runs page
-- (apart from the nightly runs).
-- Reads:  reconcile.runs
-- Writes: nothing
-- Values: :'limit' (integer).
SELECT id, started_at,
       coalesce((counts ->> 'notifications_applied')::integer, 0) AS applied,
       coalesce((counts ->> 'transactions_judged')::integer, 0) AS judged,
       coalesce((counts ->> 'items_opened')::integer, 0) AS opened
  FROM reconcile.runs
 WHERE kind = 'receiver'
 ORDER BY id DESC
 LIMIT :'limit'::integer;
