-- What a bulk decision would take (bulk_candidates.sql's items, all of them): how many of each
-- kind, and their value per currency (items of unknown value counted apart).
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: the filter (ReviewFilter.values: null where it does not filter): :'statuses',
--         :'kinds', :'severities' (text[]), :'user_id', :'product_id', :'transaction_id',
--         :'assignee' (text), :'since', :'until' (timestamptz), :'run_id' (bigint),
--         :'max_amount_currencies' (text[]), :'max_amount_millis' (bigint[]: the same order),
--         :'currency' (text), :'ids' (bigint[]); :'actor' (text: who decides).
-- Returns: one row per currency (null: no value known) and kind: currency, kind, items, amount_milli.
SELECT r.currency, r.kind, count(*) AS items, sum(r.amount_milli)::bigint AS amount_milli
  FROM reconcile.review_items r
 WHERE reconcile.review_item_matches(
           r, :'statuses'::text[], :'kinds'::text[], :'severities'::text[], :'user_id'::text, :'product_id'::text,
           :'transaction_id'::text, :'assignee'::text, :'since'::timestamptz, :'until'::timestamptz,
           :'run_id'::bigint, :'max_amount_currencies'::text[],
           :'max_amount_millis'::bigint[], :'currency'::text, :'ids'::bigint[])
   AND (r.status = 'open' OR (r.status = 'in_review' AND r.assignee = :'actor'::text))
 GROUP BY r.currency, r.kind
 ORDER BY r.currency NULLS LAST, r.kind;
