-- One batch of a package's Play purchases bought in a voided-list gap (PlayVoidSync): the white
-- rows Google's list can no longer tell about, to ask the Developer API again. Keyset-paged by
-- purchase date then order id (a range of apple_transactions_purchase_date_idx), so that a gap of
-- any size is read a batch at a time. A revoked row is left alone (a void is sticky); a partially
-- refunded one is asked again (more of it may be refunded).
-- Reads:  reconcile.apple_transactions
-- Writes: nothing.
-- Values: :'package_name' (text), :'bought_until' (timestamptz: the gap's end),
--         :'after_date' (timestamptz), :'after' (text): the last row of the previous batch, or the
--         gap's start and '' for the first.
--         :'limit' (integer).
-- Returns: transaction_id, original_transaction_id, product_id, product_type, environment,
--          quantity, purchase_date, purchase_token (in keyset order).
SELECT transaction_id, original_transaction_id, product_id, product_type, environment, quantity, purchase_date,
       purchase_token
  FROM reconcile.apple_transactions
 WHERE purchase_date >= :'after_date'::timestamptz AND purchase_date < :'bought_until'::timestamptz
   AND (purchase_date, transaction_id) > (:'after_date'::timestamptz, :'after'::text)
   AND store = 'google_play' AND bundle_id = :'package_name'::text
   AND (revocation_date IS NULL OR refunded_quantity IS NOT NULL)
   AND purchase_token IS NOT NULL
 ORDER BY purchase_date, transaction_id
 LIMIT :'limit'::integer;
