-- One page of the items matching a filter, most severe first, then oldest first.
-- Reads:  reconcile.review_item_list (reconcile.review_items)
-- Writes: nothing.
-- Values: :'filter' (reconcile.review_filter, migration 0030: ReviewFilter.values);
--         :'severity_order' (text[]: the severities most urgent first, Severity.known; others
--         after them), :'limit', :'offset' (bigint).
SELECT * FROM reconcile.review_item_list r
 WHERE reconcile.review_item_matches(r, :'filter'::reconcile.review_filter)
 ORDER BY coalesce(array_position(:'severity_order'::text[], severity), cardinality(:'severity_order'::text[])),
          created_at, id
 LIMIT :'limit'::bigint OFFSET :'offset'::bigint;
