-- Resolves an item; whoever resolves an unclaimed item becomes its assignee.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (status, resolution, resolved_by, resolved_at, note, assignee, updated_at)
-- Values: :'id' (bigint), :'resolution' (text), :'person' (text), :'note' (text, or null).
UPDATE reconcile.review_items
   SET status = 'resolved', resolution = :'resolution'::text, resolved_by = :'person'::text, resolved_at = now(),
       note = :'note'::text, assignee = coalesce(assignee, :'person'::text), updated_at = now()
 WHERE id = :'id'::bigint
RETURNING *;
