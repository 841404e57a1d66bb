-- Stage: picture, details — the ledger rows, the uploads that carried them and the review items
--        of the transactions the desk shows (DeskService; after 90_picture.sql, same transaction).
-- Reads:  diff_dl, diff_claims, diff_scope, reconcile.upload_verifications, reconcile.review_items,
--         :uploads
-- Writes: nothing; three results, each by transaction id, read into CustomerPicture.
-- Values: :'detail_ids' (text[]: the transactions whose details are read; `reconcile lookup`
--         asks for all of them, the customer page for the page it shows).
--
-- The order of a picture needs every transaction's verdict, its cards only the details of the
-- fifty a page shows: reading the uploads, ledger rows and items of all of a thousand purchases
-- was a fifth of the customer page's database time (docs/benchmarks.md).
-- The ledger rows of each transaction.
SELECT d.transaction_id, d.id, d.user_id, d.product_id, d.quantity, d.delivered_at, d.revoked_at
  FROM diff_dl d
  JOIN unnest(:'detail_ids'::text[]) AS shown (transaction_id) ON shown.transaction_id = d.transaction_id
 ORDER BY d.transaction_id, d.id;

-- The uploads that carried each transaction or said they reported it, with their verification.
SELECT carried.transaction_id, u.id, u.user_id, u.kind, u.uploaded_at, u.application_username,
       u.app_account_token::text AS app_account_token, u.claimed_transaction_id,
       v.state AS verification, v.apple_status, v.last_error AS error
  FROM (SELECT c.transaction_id, c.upload_id FROM diff_claims c
          JOIN unnest(:'detail_ids'::text[]) AS shown (transaction_id) ON shown.transaction_id = c.transaction_id
         WHERE c.uploaded
        UNION
        SELECT u2.claimed_transaction_id, u2.id
          FROM unnest(:'detail_ids'::text[]) AS shown (transaction_id)
          JOIN :uploads u2 ON u2.claimed_transaction_id = shown.transaction_id) AS carried
  JOIN :uploads u ON u.id = carried.upload_id
  LEFT JOIN reconcile.upload_verifications v ON v.upload_id = u.id
 ORDER BY carried.transaction_id, u.id;

-- The review items about each transaction, open or decided.
SELECT r.transaction_id, r.id, r.kind, r.status, r.severity, r.suggested_action, r.resolution, r.assignee
  FROM unnest(:'detail_ids'::text[]) AS shown (transaction_id)
  JOIN reconcile.review_items r ON r.transaction_id = shown.transaction_id
 ORDER BY r.transaction_id, r.id;
