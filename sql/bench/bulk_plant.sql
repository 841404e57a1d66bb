-- The outage day of reconcile-bench bulk: :'items' open missed_delivery items found by a run of
-- their own, each to grant a 6.00 CNY pack to its buyer, set-based; their ids.
-- Reads:  nothing.
-- Writes: reconcile.runs, reconcile.review_items
-- Values: :'items' (integer), :'set' (text: the transaction ids' prefix, one per planted set).
WITH run AS (
    INSERT INTO reconcile.runs (window_until, environment, status)
    VALUES (now(), 'production', 'completed')
    RETURNING id
)
INSERT INTO reconcile.review_items
    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
     suggested_action, evidence, first_seen_run, last_seen_run, amount_milli, currency,
     grant_to_user_id, grant_product_id, grant_quantity)
SELECT 'missed_delivery:' || t, 'missed_delivery', 'high', 'open', t, t, 'player-' || n % 500, 'coins_600',
       'grant', '{}', run.id, run.id, 6000, 'CNY', 'player-' || n % 500, 'coins_600', 1
  FROM run, generate_series(1, :'items'::int) n, LATERAL (SELECT :'set'::text || '-' || n AS t) planted
RETURNING id;
