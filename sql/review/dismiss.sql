-- Dismisses an item; whoever dismisses an unclaimed item becomes its assignee.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (status, resolved_by, resolved_at, note, assignee, updated_at)
-- Values: :'id' (bigint), :'person' (text), :'note' (text).
UPDATE reconcile.review_items
   SET status = 'dismissed', resolved_by = :'person'::text, resolved_at = now(), note = :'note'::text,
       assignee = coalesce(assignee, :'person'::text), updated_at = now()
 WHERE id = :'id'::bigint
RETURNING *;
