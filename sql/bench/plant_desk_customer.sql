-- Plants the desk's bench customer, set-based: :'transactions' verified purchases of the last two
-- days, each uploaded, verified, claimed and in the white table; every one but each tenth credited.
-- Reads:  nothing.
-- Writes: reconcile.receipt_uploads, reconcile.upload_verifications, reconcile.transaction_claims,
--         reconcile.apple_transactions, reconcile.deliveries
-- Values: :'user_id' (text: the customer), :'transactions' (integer), :'bundle_id' (text).
WITH ids AS (
    SELECT n, (9100000000000000 + n)::text AS id FROM generate_series(1, :'transactions'::int) n
), uploads AS (
    INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
    SELECT :'user_id'::text, 'signed_transaction', 'planted by reconcile-bench desk', id,
           now() - interval '2 days' + n * interval '1 minute'
      FROM ids
    RETURNING id AS upload_id, claimed_transaction_id AS transaction_id
), verified AS (
    INSERT INTO reconcile.upload_verifications (upload_id, state, method, environment, bundle_id)
    SELECT upload_id, 'verified', 'jws', 'Production', :'bundle_id'::text FROM uploads
), claims AS (
    INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source)
    SELECT transaction_id, upload_id, :'user_id'::text, 'jws' FROM uploads
)
INSERT INTO reconcile.apple_transactions
    (transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment,
     quantity, purchase_date, price_milli, currency, source)
SELECT id, id, 'com.hncs.szj.coin42', 'consumable', :'bundle_id'::text, 'Production', 1,
       now() - interval '2 days' + n * interval '1 minute', 6000, 'CNY', 'jws'
  FROM ids;

INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
SELECT (9100000000000000 + n)::text, :'user_id'::text, 'com.hncs.szj.coin42', 1,
       now() - interval '2 days' + n * interval '1 minute'
  FROM generate_series(1, :'transactions'::int) n WHERE n % 10 <> 0;
