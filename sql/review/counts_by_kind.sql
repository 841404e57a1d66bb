-- The items per kind matching a filter (given without its kinds: the counts beside a kind filter).
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: the filter (ReviewFilter.values: null where it does not filter): :'statuses',
--         :'kinds', :'severities' (text[]), :'user_id', :'product_id', :'transaction_id',
--         :'assignee' (text), :'since', :'until' (timestamptz), :'run_id' (bigint),
--         :'max_amount_currencies' (text[]), :'max_amount_millis' (bigint[]: the same order),
--         :'currency' (text), :'ids' (bigint[]).
SELECT kind, count(*) AS n FROM reconcile.review_items r
 WHERE reconcile.review_item_matches(
           r, :'statuses'::text[], :'kinds'::text[], :'severities'::text[], :'user_id'::text, :'product_id'::text,
           :'transaction_id'::text, :'assignee'::text, :'since'::timestamptz, :'until'::timestamptz,
           :'run_id'::bigint, :'max_amount_currencies'::text[],
           :'max_amount_millis'::bigint[], :'currency'::text, :'ids'::bigint[])
 GROUP BY kind;
