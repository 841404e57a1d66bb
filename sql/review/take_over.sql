-- Gives an item in review to another person.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (assignee, updated_at)
-- Values: :'id' (bigint), :'assignee' (text).
UPDATE reconcile.review_items SET assignee = :'assignee'::text, updated_at = now() WHERE id = :'id'::bigint
RETURNING *;
