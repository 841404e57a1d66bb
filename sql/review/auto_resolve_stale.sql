-- A decision found its item's finding gone when it judged it again (rejudged.sql): the item is
-- auto-resolved, as the next run would, and its pending decision (if any) dropped with it, so
-- that nothing is queued; the caller writes the event saying what changed.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (status, pending_*, updated_at)
-- Values: :'id' (bigint).
UPDATE reconcile.review_items
   SET status = 'auto_resolved', pending_resolution = NULL, pending_by = NULL, pending_at = NULL,
       pending_note = NULL, pending_action = NULL, updated_at = now()
 WHERE id = :'id'::bigint
RETURNING *;
