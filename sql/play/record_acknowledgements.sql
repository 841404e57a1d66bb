-- What the acknowledgement rescue settled, one row per purchase token (migration 0034), and the
-- white rows of the tokens Google now holds acknowledged marked so.
-- Reads:  reconcile.apple_transactions, reconcile.play_acknowledgements
-- Writes: reconcile.apple_transactions (acknowledged), reconcile.play_acknowledgements
-- Values: :'tokens', :'order_ids', :'packages', :'product_ids', :'kinds', :'outcomes', :'details'
--         (parallel arrays, one entry per settled token: its purchase token, order, package,
--         product, `product` or `subscription`, outcome and Google's reason or null),
--         :'run_id' (bigint: the run).
-- Returns: purchase_token, outcome (one row per token not settled before: a token settled twice,
--          by two runs or twice in one, is kept and counted once).
UPDATE reconcile.apple_transactions a
   SET acknowledged = true
 WHERE a.store = 'google_play' AND a.acknowledged IS NOT TRUE
   AND a.purchase_token IN (SELECT s.token
                              FROM unnest(:'tokens'::text[], :'outcomes'::text[]) AS s(token, outcome)
                             WHERE s.outcome IN ('acknowledged', 'already_acknowledged'));

INSERT INTO reconcile.play_acknowledgements
    (purchase_token, order_id, package_name, product_id, product_kind, outcome, detail, run_id)
SELECT DISTINCT ON (s.token) s.token, s.order_id, s.package, s.product_id, s.kind, s.outcome, s.detail,
       :'run_id'::bigint
  FROM unnest(:'tokens'::text[], :'order_ids'::text[], :'packages'::text[], :'product_ids'::text[],
              :'kinds'::text[], :'outcomes'::text[], :'details'::text[])
       AS s(token, order_id, package, product_id, kind, outcome, detail)
 ORDER BY s.token
ON CONFLICT (purchase_token) DO NOTHING
RETURNING purchase_token, outcome;
