-- The items a bulk decision (`review resolve|dismiss` with a filter) takes, oldest first: those
-- matching the filter that the person may decide now: open, or in review and claimed by them. An
-- item another person claimed, or one decided already, is never taken, so a command run again
-- after an interruption takes only what is left.
-- Reads:  reconcile.review_item_list (reconcile.review_items)
-- Writes: nothing.
-- Values: :'filter' (reconcile.review_filter, migration 0030: ReviewFilter.values);
--         :'actor' (text: who decides), :'limit' (bigint).
SELECT id, kind, transaction_id, user_id, product_id, amount_milli, currency
  FROM reconcile.review_item_list r
 WHERE reconcile.review_item_matches(r, :'filter'::reconcile.review_filter)
   AND reconcile.review_item_decidable_by(r, :'actor'::text)
 ORDER BY id
 LIMIT :'limit'::bigint;
