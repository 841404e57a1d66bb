-- Stage: key deliveries — each key's unrevoked deliveries, counted once for every rule that
-- looks at them as a group.
-- Reads:  diff_dl
-- Writes: diff_key_dl (match_key, deliveries: how many unrevoked deliveries match the key,
--         latest_user_id: the account of the latest (by delivered_at, then id),
--         first_user_id: the account of the first (by id), least_user_id: the least account,
--         least_quantity: the least quantity delivered, total_quantity: every unrevoked delivery's
--         quantity added up). Keys with no unrevoked delivery have no row.
-- Values: none.
CREATE TEMP TABLE diff_key_dl ON COMMIT DROP AS
SELECT d.match_key,
       count(*) AS deliveries,
       (array_agg(d.user_id ORDER BY d.delivered_at DESC, d.id DESC))[1] AS latest_user_id,
       (array_agg(d.user_id ORDER BY d.id))[1] AS first_user_id,
       min(d.user_id) AS least_user_id,
       min(d.quantity) AS least_quantity,
       sum(d.quantity) AS total_quantity
  FROM diff_dl d
 WHERE d.revoked_at IS NULL AND d.match_key IS NOT NULL
 GROUP BY d.match_key;

CREATE INDEX ON diff_key_dl (match_key);
ANALYZE diff_key_dl;
