-- Finding: quantity_mismatch (medium, investigate) — the unrevoked deliveries of a key total another
-- quantity than Apple's, and it is not a duplicate_delivery (duplicate_delivery.sql: two or more
-- rows totalling more than Apple's quantity, or for a non-consumable two or more rows): one row
-- with too many or too few units, or several rows with too few. Several rows that make up Apple's
-- quantity (a correction credited as a second row, such as this finding's own grant carried out)
-- are no finding. After a partial refund, deliveries already reduced by the refunded units are
-- right too.
-- Reads:  diff_key, diff_key_dl
-- Writes: diff_findings (fingerprint quantity_mismatch:<transaction>; user_id: the delivery's
--         account (of several, the least); amount: the unit price times the difference;
--         grant_quantity: the units missing from what the customer keeps after refunds,
--         revoke_quantity: the units delivered beyond Apple's quantity (one row only: several rows
--         over it are a duplicate): a decision moves the difference, never the whole quantity, and
--         never more than the item's value, which the approval threshold weighs. 0: that decision
--         has nothing to move: a grant of an over-delivery, a revoke of a short one)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date, grant_quantity, revoke_quantity)
SELECT 'quantity_mismatch:' || k.transaction_id AS fingerprint, 'quantity_mismatch' AS kind, k.transaction_id,
       k.original_transaction_id, d.least_user_id AS user_id, k.product_id, k.match_key,
       round(k.unit_price_milli * abs(k.quantity - d.total_quantity)) AS amount_milli, k.currency,
       k.purchase_date,
       greatest(k.quantity - k.key_refunded_quantity - d.total_quantity, 0) AS grant_quantity,
       greatest(d.total_quantity - k.quantity, 0) AS revoke_quantity
  FROM diff_key k JOIN diff_key_dl d ON d.match_key = k.match_key
 WHERE k.key_judged AND k.counted AND d.total_quantity <> k.quantity
   AND NOT (d.deliveries >= 2 AND (k.product_type IS NOT DISTINCT FROM 'non_consumable' OR d.total_quantity > k.quantity))
   AND (k.key_refunded_quantity = 0 OR d.total_quantity <> k.quantity - k.key_refunded_quantity);
