-- The item at the top of the working queue (open or in review, most severe, oldest) other than
-- the one just decided.
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: :'id' (bigint: the item to skip), :'severity_order' (text[], as in page.sql).
SELECT id FROM reconcile.review_items WHERE status IN ('open', 'in_review') AND id <> :'id'::bigint
 ORDER BY coalesce(array_position(:'severity_order'::text[], severity), cardinality(:'severity_order'::text[])),
          created_at, id
 LIMIT 1;
