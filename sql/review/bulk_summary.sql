-- What a bulk decision would take (bulk_candidates.sql's items, all of them): how many of each
-- kind, and their value per currency (items of unknown value counted apart).
-- Reads:  reconcile.review_item_list (reconcile.review_items)
-- Writes: nothing.
-- Values: :'filter' (reconcile.review_filter, migration 0030: ReviewFilter.values);
--         :'actor' (text: who decides).
-- Returns: one row per currency (null: no value known) and kind: currency, kind, items, amount_milli.
SELECT r.currency, r.kind, count(*) AS items, sum(r.amount_milli)::bigint AS amount_milli
  FROM reconcile.review_item_list r
 WHERE reconcile.review_item_matches(r, :'filter'::reconcile.review_filter)
   AND reconcile.review_item_decidable_by(r, :'actor'::text)
 GROUP BY r.currency, r.kind
 ORDER BY r.currency NULLS LAST, r.kind;
