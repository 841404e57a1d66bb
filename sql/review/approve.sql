-- A second person approves the pending decision: it takes effect as it was decided (resolution,
-- who decided, their note), and the item records who approved it. The caller writes the outbox row.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (status, resolution, resolved_by, resolved_at, note, approved_by, approved_at,
--         pending_*, updated_at)
-- Values: :'id' (bigint), :'person' (text: who approves).
UPDATE reconcile.review_items
   SET status = 'resolved', resolution = pending_resolution, resolved_by = pending_by, resolved_at = now(),
       note = pending_note, approved_by = :'person'::text, approved_at = now(), pending_resolution = NULL,
       pending_by = NULL, pending_at = NULL, pending_note = NULL, pending_action = NULL, updated_at = now()
 WHERE id = :'id'::bigint
RETURNING *;
