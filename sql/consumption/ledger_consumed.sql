-- As ledger_deliveries.sql, for a ledger with the optional consumed_milli column: also how much of
-- the product's delivered quantity was used (milliunits, weighted by quantity; none unless every
-- such delivery says).
-- Reads:  :deliveries
-- Writes: nothing.
-- Values: :'transaction_ids' (text[]: the family, family.sql), :'product_id' (text, null).
SELECT count(*) FILTER (WHERE d.product_id = :'product_id'::text) AS matching, count(*) AS any,
       CASE WHEN bool_and(d.consumed_milli IS NOT NULL) FILTER (WHERE d.product_id = :'product_id'::text)
            THEN (sum(d.consumed_milli::bigint * d.quantity) FILTER (WHERE d.product_id = :'product_id'::text)
                  / nullif(sum(d.quantity) FILTER (WHERE d.product_id = :'product_id'::text), 0))::int END
           AS consumed
  FROM :deliveries d
 WHERE d.transaction_id = ANY(:'transaction_ids'::text[]) AND d.revoked_at IS NULL;
