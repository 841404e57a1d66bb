-- Stage: segments — the span's judged purchases broken down by one dimension (SPEC section 19:
-- why orders leak), with the review queue's findings of those purchases per kind and currency.
-- A judged purchase is a store transaction the run judges (accepted app, paid, old enough at the
-- last finished run: sql/diff/30_tx.sql's `judged` without the transient hold of an upload still
-- being verified) purchased in [since, until); its findings are the review items of its
-- transaction in the statuses that count (InsightsQuery.counts), not a second reading of the
-- rules. The device is the `device` jsonb of the upload that first carried the purchase (by
-- uploaded_at, then id; a Server API history listing is no upload).
-- Reads:  reconcile.apple_transactions, reconcile.transaction_claims, :uploads, reconcile.review_items
-- Writes: nothing.
-- Values: :'since' (timestamptz, null: the whole history), :'until' (timestamptz),
--         :'judged_before' (timestamptz: judged_before.sql), :'accepted_apps' (text[]: each store's
--         accepted apps as `store/app`, reconcile.app_accepted), :'store' (text, null: every store),
--         :'dimension' (text: an InsightDimension's raw value), :'statuses' (text[]: the review
--         statuses that count), :'leak_kinds' (text[]: FindingKind.isLeak), :'value' (text: null
--         for every segment's counts; a segment's value for its items instead).
-- Returns: without :'value', one row per segment (is_segment: value, purchases, leaks) and, after
--          it, one per kind and currency of its findings (kind, currency — null when the item's
--          value is unknown —, items, amount_milli), ordered by value; with :'value', one row per
--          review item counted for the segment's purchases (item_id), the queue's segment filter.
--
-- One pass over the purchases, grouped by the dimension's key. The dimension is a value bound
-- for this statement alone, so the planner folds the CASE below to the one key asked and drops
-- the uploads for the dimensions that do not read them. Each purchase carries its findings (few
-- have any) as parallel arrays, unnested WITH ORDINALITY so that a purchase is counted once (its
-- first finding's row, or its only row) in the segment's grouping set and every finding once in
-- the kind's.
WITH judged AS (
    SELECT a.transaction_id, a.store, a.product_id, a.purchase_date
      FROM reconcile.apple_transactions a
     WHERE a.purchase_date >= coalesce(:'since'::timestamptz, '-infinity'::timestamptz)
       AND a.purchase_date < :'until'::timestamptz
       AND a.purchase_date <= :'judged_before'::timestamptz
       AND NOT a.pending
       AND reconcile.app_accepted(a.store, a.bundle_id, :'accepted_apps'::text[])
       AND (:'store'::text IS NULL OR a.store = :'store'::text)
), first_upload AS (
    SELECT DISTINCT ON (c.transaction_id) c.transaction_id, u.uploaded_at, u.device
      FROM reconcile.transaction_claims c
      JOIN :uploads u ON u.id = c.upload_id
     WHERE c.source <> 'server_api'
       AND :'dimension'::text IN ('app_version', 'os_version', 'device_model', 'upload_delay')
     ORDER BY c.transaction_id, u.uploaded_at, u.id
), found AS (
    SELECT r.transaction_id, r.store, bool_or(r.kind = ANY (:'leak_kinds'::text[])) AS leaked,
           array_agg(r.id ORDER BY r.id) AS ids, array_agg(r.kind ORDER BY r.id) AS kinds, array_agg(r.currency ORDER BY r.id) AS currencies,
           array_agg(r.amount_milli ORDER BY r.id) AS amounts
      FROM reconcile.review_items r
     WHERE r.status = ANY (:'statuses'::text[]) AND r.transaction_id IS NOT NULL
     GROUP BY r.transaction_id, r.store
), purchase AS NOT MATERIALIZED (
    -- The purchase's value in the dimension asked. The SPEC's device keys first, then the
    -- spellings this codebase's own writers and pages use (`app`, `os`: the demo seed, the bench's
    -- generator, the multi-night world; `device_model`, `system_version`: the item page's reading);
    -- client text is cut to 100 characters.
    SELECT CASE :'dimension'::text
               WHEN 'app_version' THEN
                   left(coalesce(nullif(u.device ->> 'app_version', ''), nullif(u.device ->> 'app', ''), 'unknown'), 100)
               WHEN 'os_version' THEN
                   left(coalesce(nullif(u.device ->> 'os_version', ''), nullif(u.device ->> 'os', ''),
                                 nullif(u.device ->> 'system_version', ''), 'unknown'), 100)
               WHEN 'device_model' THEN
                   left(coalesce(nullif(u.device ->> 'model', ''), nullif(u.device ->> 'device_model', ''), 'unknown'), 100)
               WHEN 'product' THEN j.product_id
               WHEN 'store' THEN j.store
               WHEN 'upload_delay' THEN
                   CASE WHEN u.uploaded_at IS NULL THEN 'never_uploaded'
                        WHEN u.uploaded_at - j.purchase_date < interval '1 minute' THEN 'under_1_minute'
                        WHEN u.uploaded_at - j.purchase_date < interval '1 hour' THEN 'under_1_hour'
                        WHEN u.uploaded_at - j.purchase_date < interval '1 day' THEN 'under_1_day'
                        ELSE 'later' END
               WHEN 'purchase_hour' THEN to_char(j.purchase_date AT TIME ZONE 'UTC', 'HH24')
           END AS value,
           coalesce(f.leaked, false) AS leaked, f.ids, f.kinds, f.currencies, f.amounts
      FROM judged j
      LEFT JOIN first_upload u ON u.transaction_id = j.transaction_id
      LEFT JOIN found f ON f.transaction_id = j.transaction_id AND f.store = j.store
)
SELECT p.value, GROUPING(i.kind, i.currency) = 3 AS is_segment,
       count(*) FILTER (WHERE coalesce(i.n, 1) = 1) AS purchases,
       count(*) FILTER (WHERE coalesce(i.n, 1) = 1 AND p.leaked) AS leaks,
       i.kind, i.currency, count(i.kind) AS items, sum(i.amount)::bigint AS amount_milli, NULL::bigint AS item_id
  FROM purchase p
  LEFT JOIN LATERAL unnest(p.kinds, p.currencies, p.amounts) WITH ORDINALITY AS i(kind, currency, amount, n) ON true
 WHERE :'value'::text IS NULL
 GROUP BY GROUPING SETS ((p.value), (p.value, i.kind, i.currency))
HAVING GROUPING(i.kind, i.currency) = 3 OR count(i.kind) > 0
UNION ALL
-- The queue's segment filter: the items of the segment's purchases (a constant-false branch of
-- the counts' statement, folded away by the planner, as this one is for the counts).
SELECT p.value, false, NULL, NULL, NULL, NULL, NULL, NULL, item.id
  FROM purchase p
 CROSS JOIN LATERAL unnest(p.ids) AS item(id)
 WHERE :'value'::text IS NOT NULL AND p.value = :'value'::text
 ORDER BY 1, 2 DESC, 5, 6, 9;
