-- Stage: picture — the support desk's view of the transactions in scope (SPEC section 13), read
--        from the diff's own tables after the rules ran (DeskService; not part of a run).
-- Reads:  diff_scope, diff_tx, diff_dl, diff_buyer, diff_findings, diff_kinds, diff_blocked,
--         diff_pending_users, reconcile.apple_transactions, reconcile.transaction_claims,
--         reconcile.transaction_lookups, reconcile.notification_verifications,
--         reconcile.order_transactions, reconcile.upload_verifications, reconcile.review_items,
--         :deliveries, :uploads, :products
-- Writes: nothing; returns one row: a JSON array, one object per transaction (the fields of
--         CustomerPicture.Transaction), oldest purchase first, ledger-only transactions last.
-- Values: :'judge_before' (timestamptz: the lookup's start − grace),
--         :'api_enabled' (boolean: Server API credentials are configured).
--
-- The verdict is the most severe finding of the transaction or of its non-consumable family
-- (diff_kinds ranks them; a tie goes to the kind's name), else `pending` when the rules did not
-- judge it (too young, or evidence still being verified), else `ok`.
--
-- Every part is one set-based join from the scope (its id indexes, then a GROUP BY), not a
-- subquery per transaction: a customer with thousands of purchases is read in a few index scans.
-- The JSON is `json`, not `jsonb`: built once and read once, it needs no parsed form.
WITH tx AS (
    SELECT s.transaction_id, a.transaction_id IS NOT NULL AS known, a.original_transaction_id, a.product_id, a.product_type, a.bundle_id,
           a.purchase_date, a.quantity, a.environment, a.revocation_date, a.revocation_reason,
           a.revocation_type, a.revocation_percentage, a.price_milli, a.currency, a.source
      FROM diff_scope s
      LEFT JOIN reconcile.apple_transactions a ON a.transaction_id = s.transaction_id
), sources AS (
    SELECT x.transaction_id, json_agg(DISTINCT x.source ORDER BY x.source) AS sources
      FROM (SELECT tx.transaction_id, tx.source FROM tx
            UNION ALL
            SELECT c.transaction_id, c.source
              FROM diff_scope s JOIN reconcile.transaction_claims c ON c.transaction_id = s.transaction_id
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
), deliveries AS (
    SELECT d.transaction_id,
           min(d.product_id) AS product_id,
           json_agg(json_build_object(
               'id', d.id, 'user_id', d.user_id, 'product_id', d.product_id, 'quantity', d.quantity,
               'delivered_at', to_char(d.delivered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'revoked_at', to_char(d.revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
               ORDER BY d.id) AS deliveries
      FROM diff_scope s JOIN :deliveries d ON d.transaction_id = s.transaction_id
     GROUP BY d.transaction_id
), carried AS (
    SELECT c.transaction_id, c.upload_id
      FROM diff_scope s JOIN reconcile.transaction_claims c ON c.transaction_id = s.transaction_id
    UNION
    SELECT u.claimed_transaction_id, u.id
      FROM diff_scope s JOIN :uploads u ON u.claimed_transaction_id = s.transaction_id
), uploads AS (
    SELECT carried.transaction_id,
           json_agg(json_build_object(
               'id', u.id, 'user_id', u.user_id, 'kind', u.kind,
               'uploaded_at', to_char(u.uploaded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'application_username', u.application_username, 'app_account_token', u.app_account_token,
               'claimed_transaction_id', u.claimed_transaction_id,
               'verification', v.state, 'apple_status', v.apple_status, 'error', v.last_error)
               ORDER BY u.id) AS uploads
      FROM carried
      JOIN :uploads u ON u.id = carried.upload_id
      LEFT JOIN reconcile.upload_verifications v ON v.upload_id = u.id
     GROUP BY carried.transaction_id
), items AS (
    SELECT r.transaction_id,
           json_agg(json_build_object(
               'id', r.id, 'kind', r.kind, 'status', r.status, 'severity', r.severity,
               'suggested_action', r.suggested_action, 'resolution', r.resolution, 'assignee', r.assignee)
               ORDER BY r.id) AS review_items
      FROM diff_scope s JOIN reconcile.review_items r ON r.transaction_id = s.transaction_id
     GROUP BY r.transaction_id
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
SELECT coalesce(json_agg(json_build_object(
           'transaction_id', tx.transaction_id,
           'original_transaction_id', tx.original_transaction_id,
           'product_id', coalesce(tx.product_id, dl.product_id),
           'product_type', coalesce(tx.product_type, p.product_type),
           'bundle_id', tx.bundle_id,
           'purchase_date', to_char(tx.purchase_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'quantity', tx.quantity,
           'environment', tx.environment,
           'revocation_date', to_char(tx.revocation_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'revocation_reason', tx.revocation_reason,
           'revocation_type', tx.revocation_type,
           'revocation_percentage', tx.revocation_percentage,
           'price_milli', coalesce(tx.price_milli, p.price_milli),
           'currency', coalesce(tx.currency, p.currency),
           'sources', coalesce(sources.sources, '[]'::json),
           'buyer', json_build_object('user_id', b.buyer, 'basis', b.basis),
           'deliveries', coalesce(dl.deliveries, '[]'::json),
           'uploads', coalesce(up.uploads, '[]'::json),
           'review_items', coalesce(items.review_items, '[]'::json),
           'verdict', coalesce(
               v.kind,
               CASE WHEN t.bundle_ok AND NOT t.judged THEN 'pending'
                    WHEN coalesce(t.bundle_ok, false) THEN 'ok'
                    WHEN pl.transaction_id IS NOT NULL THEN 'pending'
                    ELSE 'ok' END))
           ORDER BY tx.purchase_date NULLS LAST, tx.transaction_id), '[]'::json)::text AS transactions
  FROM tx
  LEFT JOIN :products p ON p.product_id = tx.product_id
  LEFT JOIN diff_tx t ON t.transaction_id = tx.transaction_id
  LEFT JOIN diff_buyer b ON b.transaction_id = tx.transaction_id
  LEFT JOIN sources ON sources.transaction_id = tx.transaction_id
  LEFT JOIN deliveries dl ON dl.transaction_id = tx.transaction_id
  LEFT JOIN uploads up ON up.transaction_id = tx.transaction_id
  LEFT JOIN items ON items.transaction_id = tx.transaction_id
  LEFT JOIN verdicts v ON v.transaction_id = tx.transaction_id
  LEFT JOIN pending_ledger pl ON pl.transaction_id = tx.transaction_id
 WHERE tx.known
    OR EXISTS (SELECT 1 FROM diff_dl d WHERE d.transaction_id = tx.transaction_id);
