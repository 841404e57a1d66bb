-- The items per kind matching a filter (given without its kinds: the counts beside a kind filter).
-- Reads:  reconcile.review_item_list (reconcile.review_items)
-- Writes: nothing.
-- Values: :'filter' (reconcile.review_filter, migration 0030: ReviewFilter.values).
SELECT kind, count(*) AS n FROM reconcile.review_item_list r
 WHERE reconcile.review_item_matches(r, :'filter'::reconcile.review_filter)
 GROUP BY kind;
