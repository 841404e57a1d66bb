-- The staged voids kept once each (the list is read over overlapping windows: a void seen again is
-- the same void), and the orders they void, for apply_voids.sql.
-- Reads:  stage_play_voids
-- Writes: reconcile.play_voided_purchases
-- Values: :'run_id' (bigint: the run, or the sync's, that read them).
-- Returns: order_id, voided_reason (one row per void not seen before).
INSERT INTO reconcile.play_voided_purchases
    (order_id, voided_at, purchase_token, package_name, purchased_at, voided_quantity, voided_reason,
     voided_source, first_seen_run)
SELECT DISTINCT ON (order_id, voided_at)
       order_id, voided_at, purchase_token, package_name, purchased_at, voided_quantity, voided_reason,
       voided_source, :'run_id'::bigint
  FROM stage_play_voids
 ORDER BY order_id, voided_at
ON CONFLICT (order_id, voided_at) DO NOTHING
RETURNING order_id, voided_reason;
