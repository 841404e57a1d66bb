-- A second person rejects the pending decision: the item is open again, unclaimed, for anyone to
-- decide anew; the rejection and its reason are the event the caller writes.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (status, assignee, pending_*, updated_at)
-- Values: :'id' (bigint).
UPDATE reconcile.review_items
   SET status = 'open', assignee = NULL, pending_resolution = NULL, pending_by = NULL, pending_at = NULL,
       pending_note = NULL, pending_action = NULL, updated_at = now()
 WHERE id = :'id'::bigint
RETURNING *;
