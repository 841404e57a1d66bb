-- The outage day of reconcile-bench bulk: :'items' open missed_delivery items found by a run of
-- their own, each to grant a 6.00 CNY pack to its buyer, set-based; their ids. With what each was
-- found in (Apple's transaction, its buyer's verified upload, nothing in the ledger): a decision
-- that makes the app act judges its item again with the nightly rules (SPEC section 6).
-- Reads:  nothing.
-- Writes: reconcile.runs, reconcile.review_items, reconcile.apple_transactions,
--         reconcile.receipt_uploads, reconcile.upload_verifications, reconcile.transaction_claims
-- Values: :'items' (integer), :'set' (text: the transaction ids' prefix, one per planted set).
WITH run AS (
    INSERT INTO reconcile.runs (window_until, environment, status)
    VALUES (now(), 'production', 'completed')
    RETURNING id
), planted AS (
    SELECT n, :'set'::text || '-' || n AS t, 'player-' || n % 500 AS buyer FROM generate_series(1, :'items'::int) n
), apple AS (
    INSERT INTO reconcile.apple_transactions
        (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity, purchase_date, source,
         signed_date, price_milli, currency)
    SELECT t, t, 'coins_600', 'com.hncs.szj', 'Production', 1, now() - interval '2 days', 'jws',
           now() - interval '2 days', 6000, 'CNY'
      FROM planted
), uploads AS (
    INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
    SELECT buyer, 'signed_transaction', 'bench', t, now() - interval '2 days' FROM planted
    RETURNING id, user_id, claimed_transaction_id
), verified AS (
    INSERT INTO reconcile.upload_verifications (upload_id, state, bundle_id, environment)
    SELECT id, 'verified', 'com.hncs.szj', 'Production' FROM uploads
), claims AS (
    INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source)
    SELECT claimed_transaction_id, id, user_id, 'jws' FROM uploads
)
INSERT INTO reconcile.review_items
    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
     suggested_action, evidence, first_seen_run, last_seen_run, amount_milli, currency,
     grant_to_user_id, grant_product_id, grant_quantity)
SELECT 'missed_delivery:' || t, 'missed_delivery', 'high', 'open', t, t, buyer, 'coins_600',
       'grant', '{}', run.id, run.id, 6000, 'CNY', buyer, 'coins_600', 1
  FROM run, planted
RETURNING id;
