-- One batch of a package's recorded voids whose order has no white row (PlayVoidSync): an order
-- no upload held. Its purchase token is asked of the Developer API so that the white table holds
-- the order, revoked, and a ledger credit of it is a refunded_delivery, not an
-- unverified_delivery. Only voids recorded within the 30 days Google keeps them: an older one
-- whose token Google no longer answers is not asked every run for ever. Keyset-paged by order id.
-- Reads:  reconcile.play_voided_purchases, reconcile.apple_transactions
-- Writes: nothing.
-- Values: :'package_name' (text), :'recorded_since' (timestamptz),
--         :'after' (text: the last order id of the previous batch, '' for the first),
--         :'limit' (integer).
-- Returns: order_id, purchase_token, purchased_at, voided_at (one row per order, its first void).
SELECT DISTINCT ON (v.order_id) v.order_id, v.purchase_token, v.purchased_at, v.voided_at
  FROM reconcile.play_voided_purchases v
 WHERE v.package_name = :'package_name'::text
   AND v.first_seen_at >= :'recorded_since'::timestamptz
   AND v.order_id > :'after'::text
   AND NOT EXISTS (SELECT 1 FROM reconcile.apple_transactions a WHERE a.transaction_id = v.order_id)
 ORDER BY v.order_id, v.voided_at
 LIMIT :'limit'::integer;
