-- Stage: picture — the support desk's view of the transactions in scope (SPEC section 13), read
--        from the diff's own tables after the rules ran (DeskService; not part of a run).
-- Reads:  diff_scope, diff_tx, diff_dl, diff_claims, diff_buyer, diff_findings, diff_kinds,
--         diff_blocked, diff_pending_users, reconcile.transaction_lookups,
--         reconcile.notification_verifications, reconcile.order_transactions,
--         reconcile.upload_verifications, reconcile.review_items, :uploads, :products
-- Writes: nothing; the transactions (oldest purchase first, ledger-only ones last) with their
--         verdicts, read into CustomerPicture; 91_picture_details.sql adds the ledger rows,
--         uploads and review items of those the caller shows.
-- Values: :'judge_before' (timestamptz: the lookup's start − grace),
--         :'api_stores' (text[]: the stores whose API is configured, whose "not found" a
--         delivery no source holds waits for: Apple's Server API, Google's Orders API).
--
-- The verdict is the most severe finding of the transaction or of its non-consumable family
-- (diff_kinds ranks them; a tie goes to the kind's name), else `pending` when the rules did not
-- judge it (too young, or evidence still being verified), else `ok`.
--
-- The stages' own tables hold the scope's rows of the white table (diff_tx), the ledger (diff_dl)
-- and the claims (diff_claims, every claim of a transaction the white table holds): the picture
-- reads them rather than probing the big tables for the same ids again. What no stage read (Get
-- Transaction Info's answers, applied notifications, orders, the uploads and their verifications,
-- review items) is one set-based join from the scope through the big tables' indexes, not a
-- subquery per transaction, and plain columns rather than JSON: a customer with a thousand
-- purchases is read in a few index scans and decoded without a JSON parser.
WITH sources AS (
    SELECT x.transaction_id, string_agg(DISTINCT x.source, ',' ORDER BY x.source) AS sources
      FROM (SELECT t.transaction_id, t.source FROM diff_tx t
            UNION ALL
            SELECT c.transaction_id, c.source FROM diff_claims c
            UNION ALL
            -- Get Transaction Info's answer; for a Play order id, the Orders API's (source play_api).
            SELECT l.transaction_id,
                   CASE WHEN reconcile.ledger_store(NULL, l.transaction_id) = 'google_play' THEN 'play_api'
                        ELSE 'server_api' END
              FROM diff_scope s JOIN reconcile.transaction_lookups l ON l.transaction_id = s.transaction_id
             WHERE l.result = 'found'
            UNION ALL
            SELECT n.transaction_id, 'notification'
              FROM diff_scope s JOIN reconcile.notification_verifications n ON n.transaction_id = s.transaction_id
             WHERE n.state = 'applied'
            UNION ALL
            SELECT o.transaction_id, 'order_lookup'
              FROM diff_scope s JOIN reconcile.order_transactions o ON o.transaction_id = s.transaction_id
           ) AS x (transaction_id, source)
     WHERE x.source IS NOT NULL
     GROUP BY x.transaction_id
), ledger_products AS (
    SELECT d.transaction_id, min(d.product_id) AS product_id, min(d.store) AS store
      FROM diff_dl d
     GROUP BY d.transaction_id
), verdicts AS (
    SELECT x.transaction_id, (array_agg(x.kind ORDER BY k.severity_rank, x.kind))[1] AS kind
      FROM (SELECT f.transaction_id, f.kind FROM diff_findings f WHERE f.transaction_id IS NOT NULL
            UNION
            SELECT t.transaction_id, f.kind FROM diff_tx t JOIN diff_findings f ON f.match_key = t.match_key
           ) AS x (transaction_id, kind)
      JOIN diff_kinds k ON k.kind = x.kind
     GROUP BY x.transaction_id
), pending_ledger AS (
    -- Only the ledger names it: pending while the rules could not judge its deliveries.
    SELECT DISTINCT d.transaction_id
      FROM diff_dl d
     WHERE d.revoked_at IS NULL
       AND (d.delivered_at > :'judge_before'::timestamptz
            OR d.user_id IN (SELECT user_id FROM diff_pending_users)
            OR d.transaction_id IN (SELECT transaction_id FROM diff_blocked)
            OR (d.store = ANY (:'api_stores'::text[]) AND NOT EXISTS (
                    SELECT 1 FROM reconcile.transaction_lookups l
                     WHERE l.transaction_id = d.transaction_id AND l.result = 'not_found')))
)
SELECT s.transaction_id, t.original_transaction_id,
       coalesce(t.product_id, lp.product_id) AS product_id, t.product_type,
       t.bundle_id, t.purchase_date, t.quantity, t.environment,
       t.revocation_date, t.revocation_reason, t.revocation_type, t.revocation_percentage,
       coalesce(t.apple_price_milli, p.price_milli) AS price_milli, t.currency,
       coalesce(src.sources, '') AS sources,
       b.buyer, b.basis, coalesce(t.store, lp.store, 'app_store') AS store,
       coalesce(v.kind,
                CASE WHEN t.bundle_ok AND NOT t.judged THEN 'pending'
                     WHEN coalesce(t.bundle_ok, false) THEN 'ok'
                     WHEN pl.transaction_id IS NOT NULL THEN 'pending'
                     ELSE 'ok' END) AS verdict
  FROM diff_scope s
  LEFT JOIN diff_tx t ON t.transaction_id = s.transaction_id
  LEFT JOIN ledger_products lp ON lp.transaction_id = s.transaction_id
  LEFT JOIN :products p ON p.product_id = t.product_id
  LEFT JOIN diff_buyer b ON b.transaction_id = s.transaction_id
  LEFT JOIN sources src ON src.transaction_id = s.transaction_id
  LEFT JOIN verdicts v ON v.transaction_id = s.transaction_id
  LEFT JOIN pending_ledger pl ON pl.transaction_id = s.transaction_id
 WHERE t.transaction_id IS NOT NULL OR lp.transaction_id IS NOT NULL
 ORDER BY t.purchase_date NULLS LAST, s.transaction_id;
