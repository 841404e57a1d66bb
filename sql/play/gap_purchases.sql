-- One batch of a package's Play purchases bought in a voided-list gap (PlayVoidSync): the white
-- rows Google's list can no longer tell about, to ask the Developer API again. Keyset-paged by
-- order id, so that a gap of any size is read a batch at a time. A revoked row is left alone (a
-- void is sticky); a partially refunded one is asked again (more of it may be refunded).
-- Reads:  reconcile.apple_transactions
-- Writes: nothing.
-- Values: :'package_name' (text), :'bought_from', :'bought_until' (timestamptz: the gap),
--         :'after' (text: the last order id of the previous batch, '' for the first),
--         :'limit' (integer).
-- Returns: transaction_id, original_transaction_id, product_id, product_type, environment,
--          quantity, purchase_date, purchase_token (ordered by transaction_id).
SELECT transaction_id, original_transaction_id, product_id, product_type, environment, quantity, purchase_date,
       purchase_token
  FROM reconcile.apple_transactions
 WHERE store = 'google_play' AND bundle_id = :'package_name'::text
   AND purchase_date >= :'bought_from'::timestamptz AND purchase_date < :'bought_until'::timestamptz
   AND (revocation_date IS NULL OR refunded_quantity IS NOT NULL)
   AND purchase_token IS NOT NULL
   AND transaction_id > :'after'::text
 ORDER BY transaction_id
 LIMIT :'limit'::integer;
