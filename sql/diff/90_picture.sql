-- Stage: picture — the support desk's view of the transactions in scope (SPEC section 13), read
--        from the diff's own tables after the rules ran (DeskService; not part of a run).
-- Reads:  diff_scope, diff_tx, diff_dl, diff_claims, diff_buyer, diff_findings, diff_kinds,
--         diff_blocked, diff_pending_users, reconcile.transaction_lookups,
--         reconcile.notification_verifications, reconcile.order_transactions,
--         reconcile.upload_verifications, reconcile.review_items, :uploads, :products
-- Writes: nothing; four results, read in order into CustomerPicture: the transactions (oldest
--         purchase first, ledger-only ones last), then their ledger rows, the uploads that carried
--         them, and their review items (each by transaction id).
-- Values: :'judge_before' (timestamptz: the lookup's start − grace),
--         :'api_enabled' (boolean: Server API credentials are configured).
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
            SELECT l.transaction_id, 'server_api'
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
    SELECT d.transaction_id, min(d.product_id) AS product_id
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
            OR (:'api_enabled'::boolean AND NOT EXISTS (
                    SELECT 1 FROM reconcile.transaction_lookups l
                     WHERE l.transaction_id = d.transaction_id AND l.result = 'not_found')))
)
SELECT s.transaction_id, t.original_transaction_id,
       coalesce(t.product_id, lp.product_id) AS product_id, t.product_type,
       t.bundle_id, t.purchase_date, t.quantity, t.environment,
       t.revocation_date, t.revocation_reason, t.revocation_type, t.revocation_percentage,
       coalesce(t.apple_price_milli, p.price_milli) AS price_milli, t.currency,
       coalesce(src.sources, '') AS sources,
       b.buyer, b.basis,
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

-- The ledger rows of each transaction.
SELECT d.transaction_id, d.id, d.user_id, d.product_id, d.quantity, d.delivered_at, d.revoked_at
  FROM diff_dl d
 ORDER BY d.transaction_id, d.id;

-- The uploads that carried each transaction or said they reported it, with their verification.
SELECT carried.transaction_id, u.id, u.user_id, u.kind, u.uploaded_at, u.application_username,
       u.app_account_token::text AS app_account_token, u.claimed_transaction_id,
       v.state AS verification, v.apple_status, v.last_error AS error
  FROM (SELECT c.transaction_id, c.upload_id FROM diff_claims c WHERE c.uploaded
        UNION
        SELECT u2.claimed_transaction_id, u2.id
          FROM diff_scope s JOIN :uploads u2 ON u2.claimed_transaction_id = s.transaction_id) AS carried
  JOIN :uploads u ON u.id = carried.upload_id
  LEFT JOIN reconcile.upload_verifications v ON v.upload_id = u.id
 ORDER BY carried.transaction_id, u.id;

-- The review items about each transaction, open or decided.
SELECT r.transaction_id, r.id, r.kind, r.status, r.severity, r.suggested_action, r.resolution, r.assignee
  FROM diff_scope s JOIN reconcile.review_items r ON r.transaction_id = s.transaction_id
 ORDER BY r.transaction_id, r.id;
