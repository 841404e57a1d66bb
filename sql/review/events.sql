-- An item's history, oldest first.
-- Reads:  reconcile.review_events
-- Writes: nothing.
-- Values: :'id' (bigint: the item).
SELECT id, run_id, actor, from_status, to_status, note, details::text AS details, created_at
  FROM reconcile.review_events WHERE review_item_id = :'id'::bigint ORDER BY id;
