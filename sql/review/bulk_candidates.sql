-- The items a bulk decision (`review resolve|dismiss` with a filter) takes, oldest first: those
-- matching the filter that the person may decide now: open, or in review and claimed by them. An
-- item another person claimed, or one decided already, is never taken, so a command run again
-- after an interruption takes only what is left.
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: the filter (ReviewFilter.values: null where it does not filter): :'statuses',
--         :'kinds', :'severities' (text[]), :'user_id', :'product_id', :'transaction_id',
--         :'assignee' (text), :'since', :'until' (timestamptz), :'run_id' (bigint),
--         :'max_amount_currencies' (text[]), :'max_amount_millis' (bigint[]: the same order),
--         :'currency' (text), :'ids' (bigint[]); :'actor' (text: who decides), :'limit' (bigint).
SELECT id, kind, transaction_id, user_id, product_id, amount_milli, currency
  FROM reconcile.review_items r
 WHERE reconcile.review_item_matches(
           r, :'statuses'::text[], :'kinds'::text[], :'severities'::text[], :'user_id'::text, :'product_id'::text,
           :'transaction_id'::text, :'assignee'::text, :'since'::timestamptz, :'until'::timestamptz,
           :'run_id'::bigint, :'max_amount_currencies'::text[],
           :'max_amount_millis'::bigint[], :'currency'::text, :'ids'::bigint[])
   AND (r.status = 'open' OR (r.status = 'in_review' AND r.assignee = :'actor'::text))
 ORDER BY id
 LIMIT :'limit'::bigint;
