-- Google Play's voids onto the white table's Play rows: each void once, whatever order the list,
-- a notification and the purchase itself arrive in (SPEC section 18).
-- Reads:  reconcile.play_voided_purchases, reconcile.apple_transactions
-- Writes: reconcile.apple_transactions (revocation_date, revocation_reason, refunded_quantity,
--         signed_date, source, last_seen_run of the orders whose voids changed them)
-- Values: :'order_ids' (text[]: the orders to apply; null for every order with a void),
--         :'run_id' (bigint: the run that judges the change).
-- Returns: transaction_id (one row per order changed).
--
-- An order with a full void (no voidedQuantity) is revoked whole from its first full void; one
-- with only quantity-based partial refunds has their units summed (refunded_quantity, at most its
-- quantity) from its latest. The row's signed_date moves to the void, so that an older copy of
-- the purchase (the signed purchaseData an upload carries, signed before it) never clears it
-- (sql/transactions/upsert_staged.sql: newer data wins). A row is written only when the voids
-- change it: a nightly run that reads the same voids again judges nothing again.
WITH voids AS (
    SELECT v.order_id,
           min(v.voided_at) FILTER (WHERE v.voided_quantity IS NULL) AS whole_at,
           max(v.voided_at) AS last_at,
           sum(v.voided_quantity) FILTER (WHERE v.voided_quantity IS NOT NULL) AS units,
           (array_agg(v.voided_reason ORDER BY v.voided_at DESC))[1] AS reason
      FROM reconcile.play_voided_purchases v
     WHERE :'order_ids'::text[] IS NULL OR v.order_id = ANY (:'order_ids'::text[])
     GROUP BY v.order_id
), wanted AS (
    SELECT a.transaction_id, coalesce(v.whole_at, v.last_at) AS revocation_date, v.reason,
           CASE WHEN v.whole_at IS NOT NULL OR v.units >= a.quantity THEN NULL ELSE v.units::int END AS refunded_quantity,
           v.last_at
      FROM voids v
      JOIN reconcile.apple_transactions a ON a.transaction_id = v.order_id AND a.store = 'google_play'
)
UPDATE reconcile.apple_transactions a
   SET revocation_date = w.revocation_date, revocation_reason = w.reason, refunded_quantity = w.refunded_quantity,
       signed_date = greatest(a.signed_date, w.last_at), source = 'play_voided',
       last_seen_run = :'run_id'::bigint, last_seen_at = now()
  FROM wanted w
 WHERE a.transaction_id = w.transaction_id
   AND (a.revocation_date IS DISTINCT FROM w.revocation_date OR a.refunded_quantity IS DISTINCT FROM w.refunded_quantity
        OR a.revocation_reason IS DISTINCT FROM w.reason)
RETURNING a.transaction_id;
