-- Stage: tx — the stores' transactions in scope, with what the rules need to know of each.
-- Reads:  diff_scope, diff_blocked, reconcile.apple_transactions, :products
-- Writes: diff_tx (one row per transaction in scope that Apple confirmed; price_milli: the
--         whole transaction's price, unit_price_milli: one unit's, apple_price_milli: Apple's own,
--         null when Apple did not say; refunded_quantity: how many units Apple's revocation took
--         back, 0 when none; store: app_store or google_play)
-- Values: :'accepted_apps' (text[]: each store's accepted apps as `store/app`,
--         reconcile.app_accepted), :'counted' (text: 'Production' or 'Sandbox'),
--         :'judge_before' (timestamptz: run start − grace).
--
-- match_key is what a delivery matches: the transaction, or for a non-consumable its original
-- transaction (a restore is not a new purchase). judged: accepted bundle (or package), old enough,
-- paid (a pending Play purchase is not), and no upload still being verified says it reports this
-- transaction. A Play test purchase is stored as Sandbox, so the environment rules judge it as
-- Apple's sandbox purchases.
CREATE TEMP TABLE IF NOT EXISTS diff_tx (
    transaction_id text, original_transaction_id text, product_id text, bundle_id text, environment text,
    quantity integer, purchase_date timestamptz, revocation_date timestamptz, ownership_type text,
    app_account_token uuid, product_type text, price_milli bigint, unit_price_milli numeric, currency text,
    revocation_type text, revocation_percentage integer, apple_price_milli bigint, revocation_reason integer,
    source text, refunded_quantity integer, match_key text, bundle_ok boolean, counted boolean, judged boolean,
    store text, obfuscated_account_id text
) ON COMMIT DELETE ROWS;
CREATE INDEX IF NOT EXISTS diff_tx_transaction_id ON diff_tx (transaction_id);
CREATE INDEX IF NOT EXISTS diff_tx_match_key ON diff_tx (match_key);

INSERT INTO diff_tx (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity,
                     purchase_date, revocation_date, ownership_type, app_account_token, product_type,
                     price_milli, unit_price_milli, currency, revocation_type, revocation_percentage,
                     apple_price_milli, revocation_reason, source, refunded_quantity, match_key, bundle_ok,
                     counted, judged, store, obfuscated_account_id)
SELECT a.transaction_id, a.original_transaction_id, a.product_id, a.bundle_id, a.environment,
       a.quantity, a.purchase_date, a.revocation_date, a.ownership_type, a.app_account_token,
       coalesce(a.product_type, p.product_type) AS product_type,
       -- Apple's JWS `price` "shows the total amount of the transaction for the quantity the
       -- customer purchased" (developer.apple.com/documentation/appstoreservernotifications/price);
       -- the catalogue's price_milli is per unit.
       coalesce(a.price_milli, p.price_milli * a.quantity) AS price_milli,
       coalesce(a.price_milli::numeric / nullif(a.quantity, 0), p.price_milli) AS unit_price_milli,
       coalesce(a.currency, p.currency) AS currency,
       a.revocation_type, a.revocation_percentage,
       -- For the support desk's picture (90_picture.sql), which reads this table rather than the
       -- white table again: Apple's own price, the revocation's reason, where the row came from.
       a.price_milli AS apple_price_milli, a.revocation_reason, a.source,
       -- A prorated refund's percentage is of the whole quantity (developer.apple.com/documentation/
       -- storekit/transaction/revocationpercentage: 1 of 3 refunded is about 33.333%), so it
       -- refunds that share of the units, rounded, at least one; any other revocation all of them.
       -- Google Play says how many units a partial refund took (migration 0029's refunded_quantity).
       CASE WHEN a.revocation_date IS NULL THEN 0
            WHEN a.refunded_quantity IS NOT NULL THEN least(a.quantity, a.refunded_quantity)
            WHEN a.revocation_type = 'REFUND_PRORATED' AND a.revocation_percentage IS NOT NULL
            THEN least(a.quantity, greatest(1, round(a.quantity * a.revocation_percentage / 100000.0)))::int
            ELSE a.quantity END AS refunded_quantity,
       CASE WHEN coalesce(a.product_type, p.product_type) = 'non_consumable'
            THEN 'o:' || a.original_transaction_id ELSE 't:' || a.transaction_id END AS match_key,
       reconcile.app_accepted(a.store, a.bundle_id, :'accepted_apps'::text[]) AS bundle_ok,
       a.environment = :'counted'::text AS counted,
       reconcile.app_accepted(a.store, a.bundle_id, :'accepted_apps'::text[])
           AND a.purchase_date <= :'judge_before'::timestamptz AND NOT a.pending
           AND NOT EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = a.transaction_id)
           AS judged, a.store, a.obfuscated_account_id
  FROM reconcile.apple_transactions a
  JOIN diff_scope s ON s.transaction_id = a.transaction_id
  LEFT JOIN :products p ON p.product_id = a.product_id;

ANALYZE diff_tx;
