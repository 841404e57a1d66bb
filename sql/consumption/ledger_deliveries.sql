-- The unrevoked deliveries of a transaction's family (family.sql: for a non-consumable, its
-- restores too): how many are of the product Apple sold, how many at all.
-- (ledger_consumed.sql also reads how much was used, when the ledger has consumed_milli.)
-- Reads:  :deliveries
-- Writes: nothing.
-- Values: :'transaction_ids' (text[]: the family), :'product_id' (text, null).
SELECT count(*) FILTER (WHERE d.product_id = :'product_id'::text) AS matching, count(*) AS any,
       NULL::int AS consumed
  FROM :deliveries d
 WHERE d.transaction_id = ANY(:'transaction_ids'::text[]) AND d.revoked_at IS NULL;
