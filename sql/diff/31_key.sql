-- Stage: key — one row per matching key: for a non-consumable the original purchase stands for
-- its restores.
-- Reads:  diff_tx
-- Writes: diff_key (diff_tx's columns of the key's representative transaction, plus
--         key_judged: every transaction of the key is judged; key_revoked: one of them is revoked;
--         key_refunded_quantity: the most units any of them had refunded; store)
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS diff_key (
    transaction_id text, original_transaction_id text, product_id text, bundle_id text, environment text,
    quantity integer, purchase_date timestamptz, revocation_date timestamptz, ownership_type text,
    app_account_token uuid, product_type text, price_milli bigint, unit_price_milli numeric, currency text,
    revocation_type text, revocation_percentage integer, refunded_quantity integer, match_key text,
    bundle_ok boolean, counted boolean, judged boolean, key_judged boolean, key_revoked boolean,
    key_refunded_quantity integer, store text
) ON COMMIT DELETE ROWS;
CREATE INDEX IF NOT EXISTS diff_key_match_key ON diff_key (match_key);

INSERT INTO diff_key (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity,
                      purchase_date, revocation_date, ownership_type, app_account_token, product_type,
                      price_milli, unit_price_milli, currency, revocation_type, revocation_percentage,
                      refunded_quantity, match_key, bundle_ok, counted, judged, key_judged, key_revoked,
                      key_refunded_quantity, store)
SELECT DISTINCT ON (t.match_key)
       t.transaction_id, t.original_transaction_id, t.product_id, t.bundle_id, t.environment,
       t.quantity, t.purchase_date, t.revocation_date, t.ownership_type, t.app_account_token,
       t.product_type, t.price_milli, t.unit_price_milli, t.currency, t.revocation_type,
       t.revocation_percentage, t.refunded_quantity, t.match_key, t.bundle_ok, t.counted, t.judged,
       bool_and(t.judged) OVER (PARTITION BY t.match_key) AS key_judged,
       bool_or(t.revocation_date IS NOT NULL) OVER (PARTITION BY t.match_key) AS key_revoked,
       max(t.refunded_quantity) OVER (PARTITION BY t.match_key) AS key_refunded_quantity, t.store
  FROM diff_tx t
 ORDER BY t.match_key, (t.transaction_id = t.original_transaction_id) DESC, t.purchase_date, t.transaction_id;

ANALYZE diff_key;
