-- Claims an open item for a person: open → in_review.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (status, assignee, updated_at)
-- Values: :'id' (bigint), :'assignee' (text).
UPDATE reconcile.review_items SET status = 'in_review', assignee = :'assignee'::text, updated_at = now()
 WHERE id = :'id'::bigint
RETURNING *;
