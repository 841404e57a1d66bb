-- An empty staging table for a batch of Apple-confirmed transactions and who carried them (this
-- session's, kept between batches and emptied for each).
-- Reads:  nothing.
-- Writes: stage_transactions (created when missing, emptied)
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS stage_transactions (
    transaction_id text, original_transaction_id text, product_id text, product_type text,
    bundle_id text, environment text, quantity integer, purchase_date timestamptz,
    original_purchase_date timestamptz, expires_date timestamptz, revocation_date timestamptz,
    revocation_reason integer, ownership_type text, app_account_token uuid, web_order_line_item_id text,
    price_milli bigint, currency text, storefront text, signed_date timestamptz, source text,
    upload_id bigint, user_id text, application_username text, claim_token uuid,
    revocation_type text, revocation_percentage integer, app_transaction_id text,
    store text, obfuscated_account_id text, purchase_token text, refunded_quantity integer, acknowledged boolean,
    pending boolean
);

TRUNCATE stage_transactions;
