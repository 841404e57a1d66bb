-- The transactions whose deliveries count for one Apple asks about, as the diff matches them
-- (SPEC section 5: match_key in sql/diff/30_tx.sql, scope/families.sql): the transaction itself,
-- first, and for a non-consumable every transaction with the same original transaction (a restore
-- is not a new purchase). Each row also carries the asked transaction's product and type: the
-- white table's, else the catalogue's (as the diff reads them), else the request's own signed
-- transaction's (an hourly sync answers before any run applied it). Its original transaction is
-- the white table's, else itself (Apple asks about a purchase, which is its own original).
-- Reads:  reconcile.apple_transactions, :products
-- Writes: nothing.
-- Values: :'transaction_id' (text), :'product_id' (text, null: the request's),
--         :'product_type' (text, null: the request's).
WITH asked AS (
    SELECT coalesce(a.product_type, p.product_type, :'product_type'::text) AS product_type,
           coalesce(a.product_id, :'product_id'::text) AS product_id,
           coalesce(a.original_transaction_id, q.transaction_id) AS original_transaction_id,
           q.transaction_id
      FROM (SELECT :'transaction_id'::text AS transaction_id) q
      LEFT JOIN reconcile.apple_transactions a ON a.transaction_id = q.transaction_id
      LEFT JOIN :products p ON p.product_id = coalesce(a.product_id, :'product_id'::text)
)
SELECT asked.transaction_id, asked.product_type, asked.product_id FROM asked
UNION ALL
SELECT o.transaction_id, asked.product_type, asked.product_id
  FROM asked
  JOIN reconcile.apple_transactions o
    ON o.original_transaction_id = asked.original_transaction_id AND o.transaction_id <> asked.transaction_id
 WHERE asked.product_type = 'non_consumable';
