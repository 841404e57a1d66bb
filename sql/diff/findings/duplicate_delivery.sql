-- Finding: duplicate_delivery (medium, revoke) — two or more unrevoked deliveries for one key whose
-- quantities total more than Apple's (for a non-consumable: two or more for one original
-- transaction, whatever their quantities). Rows that add up to Apple's quantity (a correction
-- credited as a second row) are no finding, and too few units over several rows are a
-- quantity_mismatch (quantity_mismatch.sql).
-- Reads:  diff_key, diff_key_dl, diff_dl
-- Writes: diff_findings (fingerprint duplicate_delivery:<transaction>; user_id: the account of
--         the latest delivery; amount: the units over Apple's quantity at the unit price, for a
--         non-consumable every delivery past the first; revoke_quantity: the units over Apple's
--         quantity, at most what the latest delivery's account holds of the key, so that a revoke
--         leaves Apple's quantity credited and never takes more than the item's value; for a
--         non-consumable none, and 71_actions.sql takes back the latest delivery whole)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date, revoke_quantity)
SELECT 'duplicate_delivery:' || k.transaction_id AS fingerprint, 'duplicate_delivery' AS kind, k.transaction_id,
       k.original_transaction_id, d.latest_user_id AS user_id, k.product_id, k.match_key,
       CASE WHEN k.product_type IS NOT DISTINCT FROM 'non_consumable' THEN k.price_milli * (d.deliveries - 1)
            ELSE round(k.unit_price_milli * (d.total_quantity - k.quantity)) END AS amount_milli,
       k.currency, k.purchase_date,
       CASE WHEN k.product_type IS DISTINCT FROM 'non_consumable'
            THEN least(d.total_quantity - k.quantity,
                       (SELECT sum(x.quantity) FROM diff_dl x
                         WHERE x.match_key = k.match_key AND x.revoked_at IS NULL AND x.user_id = d.latest_user_id))
       END AS revoke_quantity
  FROM diff_key k JOIN diff_key_dl d ON d.match_key = k.match_key
 WHERE k.key_judged AND k.counted AND d.deliveries >= 2
   AND (k.product_type IS NOT DISTINCT FROM 'non_consumable' OR d.total_quantity > k.quantity);
