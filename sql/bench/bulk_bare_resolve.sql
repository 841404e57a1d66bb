-- reconcile-bench bulk's yardstick (3 of 4): the item resolved as granted.
-- Reads:  nothing.
-- Writes: reconcile.review_items
-- Values: :'id' (bigint), :'actor' (text).
UPDATE reconcile.review_items
   SET status = 'resolved', resolution = 'granted', resolved_by = :'actor'::text, resolved_at = now(),
       assignee = coalesce(assignee, :'actor'::text), updated_at = now()
 WHERE id = :'id'::bigint;
