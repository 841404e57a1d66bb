-- The white table of the history, with the facts of the claims copy_transaction_claims.sql writes,
-- loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.apple_transactions
-- Values: none.
COPY reconcile.apple_transactions (
    transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
    purchase_date, original_purchase_date, expires_date, revocation_date, revocation_reason,
    ownership_type, app_account_token, web_order_line_item_id, price_milli, currency, storefront,
    signed_date, source, first_seen_at, last_seen_at, claimed_by, claim_token,
    claim_usernames_name_uploader) FROM STDIN;
