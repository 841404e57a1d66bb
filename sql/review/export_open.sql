-- Opens the cursor the CSV export reads a batch at a time (export_fetch.sql): each FETCH is a
-- statement of its own, so a page's statement_timeout bounds one batch and never cuts a long
-- download short. The whole result is read: it is planned for all of it, as the plain query
-- would be, not for the first tenth a cursor is planned for by default. Inside a transaction.
-- Reads:  reconcile.review_item_list (reconcile.review_items)
-- Writes: the cursor review_export.
-- Values: :'filter' (reconcile.review_filter, migration 0030: ReviewFilter.values);
--         :'severity_order' (text[], as in page.sql).
SET LOCAL cursor_tuple_fraction = 1.0;

DECLARE review_export NO SCROLL CURSOR FOR
SELECT * FROM reconcile.review_item_list r
 WHERE reconcile.review_item_matches(r, :'filter'::reconcile.review_filter)
 ORDER BY coalesce(array_position(:'severity_order'::text[], severity), cardinality(:'severity_order'::text[])),
          created_at, id;
