-- Stage: key deliveries — each key's unrevoked deliveries, counted once for every rule that
-- looks at them as a group.
-- Reads:  diff_dl
-- Writes: diff_key_dl (match_key, deliveries: how many unrevoked deliveries match the key,
--         latest_user_id: the account of the latest (by delivered_at, then id),
--         first_user_id: the account of the first (by id), least_user_id: the least account,
--         least_quantity: the least quantity delivered, total_quantity: every unrevoked delivery's
--         quantity added up). Keys with no unrevoked delivery have no row.
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS diff_key_dl (
    match_key text, deliveries bigint, latest_user_id text, first_user_id text, least_user_id text,
    least_quantity integer, total_quantity bigint
) ON COMMIT DELETE ROWS;
CREATE INDEX IF NOT EXISTS diff_key_dl_match_key ON diff_key_dl (match_key);

INSERT INTO diff_key_dl (match_key, deliveries, latest_user_id, first_user_id, least_user_id, least_quantity,
                         total_quantity)
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

ANALYZE diff_key_dl;
