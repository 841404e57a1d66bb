-- The refund rate by UTC day of purchase (SPEC section 19): of the store transactions bought that
-- day (both stores), how many are revoked (refunded in full or in part, or voided) now.
-- Reads:  reconcile.apple_transactions
-- Writes: nothing
-- Values: :'since' and :'until' (timestamptz): purchases in [since, until].
-- Returns: day (timestamptz: the UTC day's midnight), purchases (integer), revoked (integer), one row per day with a purchase.
SELECT (purchase_date AT TIME ZONE 'UTC')::date::timestamp AT TIME ZONE 'UTC' AS day, count(*)::integer AS purchases,
       count(*) FILTER (WHERE revocation_date IS NOT NULL)::integer AS revoked
  FROM reconcile.apple_transactions
 WHERE purchase_date >= :'since'::timestamptz AND purchase_date <= :'until'::timestamptz
 GROUP BY 1
 ORDER BY 1;
