-- The staged batch into the white table, every transaction once, then who carried it. Newer Apple
-- data wins (the staged row is newer when its signed_date is not older than the stored one's);
-- what only some sources carry (price, token) is kept. The claims' triggers (migration 0011) then
-- refresh the white rows' claimed_by, claim_token and claim_usernames_name_uploader: the upsert
-- locks the white rows before the claims are written.
-- Reads:  stage_transactions, reconcile.apple_transactions, reconcile.transaction_claims
-- Writes: reconcile.apple_transactions, reconcile.transaction_claims
-- Values: :'run_id' (bigint: the run that saw them).
INSERT INTO reconcile.apple_transactions AS a
    (transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
     purchase_date, original_purchase_date, expires_date, revocation_date, revocation_reason,
     ownership_type, app_account_token, web_order_line_item_id, price_milli, currency, storefront,
     signed_date, source, first_seen_run, last_seen_run, revocation_type, revocation_percentage,
     app_transaction_id)
SELECT DISTINCT ON (transaction_id)
       transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
       purchase_date, original_purchase_date, expires_date, revocation_date, revocation_reason,
       ownership_type, app_account_token, web_order_line_item_id, price_milli, currency, storefront,
       signed_date, source, :'run_id'::bigint, :'run_id'::bigint, revocation_type, revocation_percentage,
       app_transaction_id
  FROM stage_transactions
 ORDER BY transaction_id, signed_date DESC NULLS LAST
ON CONFLICT (transaction_id) DO UPDATE SET
    original_transaction_id = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                                   THEN EXCLUDED.original_transaction_id ELSE a.original_transaction_id END,
    product_id = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                      THEN EXCLUDED.product_id ELSE a.product_id END,
    product_type = coalesce(CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                                 THEN EXCLUDED.product_type END,
                            a.product_type, EXCLUDED.product_type),
    bundle_id = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                     THEN EXCLUDED.bundle_id ELSE a.bundle_id END,
    environment = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                       THEN EXCLUDED.environment ELSE a.environment END,
    quantity = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                    THEN EXCLUDED.quantity ELSE a.quantity END,
    purchase_date = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                         THEN EXCLUDED.purchase_date ELSE a.purchase_date END,
    original_purchase_date = coalesce(a.original_purchase_date, EXCLUDED.original_purchase_date),
    expires_date = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                        THEN coalesce(EXCLUDED.expires_date, a.expires_date) ELSE a.expires_date END,
    revocation_date = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                           THEN EXCLUDED.revocation_date ELSE a.revocation_date END,
    revocation_reason = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                             THEN EXCLUDED.revocation_reason ELSE a.revocation_reason END,
    -- Only StoreKit 2 sources carry these; a newer receipt (which has none) keeps what they said
    -- about a revocation it confirms, and a reversed refund (no revocation date) clears them.
    revocation_type = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                                AND EXCLUDED.revocation_date IS NULL THEN NULL
                           WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                           THEN coalesce(EXCLUDED.revocation_type, a.revocation_type)
                           ELSE a.revocation_type END,
    revocation_percentage = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                                      AND EXCLUDED.revocation_date IS NULL THEN NULL
                                 WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                                      AND EXCLUDED.revocation_type IS NOT NULL
                                 THEN EXCLUDED.revocation_percentage
                                 ELSE a.revocation_percentage END,
    app_transaction_id = coalesce(a.app_transaction_id, EXCLUDED.app_transaction_id),
    ownership_type = coalesce(CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                                   THEN EXCLUDED.ownership_type END,
                              a.ownership_type, EXCLUDED.ownership_type),
    app_account_token = coalesce(a.app_account_token, EXCLUDED.app_account_token),
    web_order_line_item_id = coalesce(a.web_order_line_item_id, EXCLUDED.web_order_line_item_id),
    price_milli = coalesce(CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                                THEN EXCLUDED.price_milli END,
                           a.price_milli, EXCLUDED.price_milli),
    currency = coalesce(CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                             THEN EXCLUDED.currency END, a.currency, EXCLUDED.currency),
    storefront = coalesce(CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                               THEN EXCLUDED.storefront END,
                          a.storefront, EXCLUDED.storefront),
    signed_date = greatest(a.signed_date, EXCLUDED.signed_date),
    source = CASE WHEN EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz)
                  THEN EXCLUDED.source ELSE a.source END,
    last_seen_run = EXCLUDED.last_seen_run,
    last_seen_at = now();

INSERT INTO reconcile.transaction_claims
    (transaction_id, upload_id, user_id, application_username, app_account_token, source, run_id)
SELECT DISTINCT ON (transaction_id, upload_id)
       transaction_id, upload_id, user_id, application_username, claim_token, source, :'run_id'::bigint
  FROM stage_transactions WHERE upload_id IS NOT NULL
ON CONFLICT (transaction_id, upload_id) DO NOTHING;
