-- Stage: scope, a non-consumable's family.
-- Reads:  diff_scope, reconcile.apple_transactions, :products
-- Writes: diff_scope
-- Values: none.
--
-- A non-consumable is matched by its original transaction: bring the whole family in. The
-- transaction itself is in already: skipped rather than offered again, since every row the unique
-- index turns away costs an aborted insertion (at 5M, 62,496 of the whole history's 124,992 rows
-- here, 0.3 s of 1.5).
ANALYZE diff_scope;

INSERT INTO diff_scope (transaction_id)
SELECT o.transaction_id
  FROM reconcile.apple_transactions a
  JOIN diff_scope s ON s.transaction_id = a.transaction_id
  LEFT JOIN :products p ON p.product_id = a.product_id
  JOIN reconcile.apple_transactions o
    ON o.original_transaction_id = a.original_transaction_id AND o.transaction_id <> a.transaction_id
 WHERE coalesce(a.product_type, p.product_type) = 'non_consumable'
ON CONFLICT DO NOTHING;

ANALYZE diff_scope, diff_scope_uploads;
