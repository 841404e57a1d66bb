-- How many items match a filter (the queue's total).
-- Reads:  reconcile.review_item_list (reconcile.review_items)
-- Writes: nothing.
-- Values: :'filter' (reconcile.review_filter, migration 0030: ReviewFilter.values).
SELECT count(*) FROM reconcile.review_item_list r
 WHERE reconcile.review_item_matches(r, :'filter'::reconcile.review_filter);
