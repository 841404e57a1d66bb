-- The staged batch into the white table, every transaction once, then who carried it.
--
-- Which Apple data wins (SPEC section 2: newer Apple data, the later signedDate, wins), the same
-- whatever order the rows arrive in, one by one or in one batch:
-- - The row with the later signed_date wins (a row without one is older than any with one).
-- - At an equal signed_date (a receipt created in the same second as a refund, one uploaded before
--   it and one after), the later revocation_date wins, and so a revoked row wins over an unrevoked
--   one: a refund is the later event in Apple's life of a transaction, and an equal date never
--   clears a revocation. A refund Apple reverses (REFUND_REVERSED) comes back signed later than the
--   refund, so it clears it; a copy signed in the same second as the reversal cannot be told from
--   one signed before the refund, and keeps the revocation until anything signed later says more.
-- - Then the row that says more units were refunded (Google Play's partial refunds; Apple's rows
--   carry none).
-- - Then a paid purchase over a pending one, and an acknowledged one over one not acknowledged
--   (Google Play: the same purchaseData signed at the purchase time, before and after the payment
--   cleared or the app acknowledged it, ties on everything above; the later state wins, whichever
--   upload is read first or whether both come in one batch).
-- - Then, still equal, a fixed order on every other column (revocation type, percentage and reason,
--   source, quantity, product, …, storefront), so that two rows never tie.
-- The winner's columns are stored; what only some sources carry (price, currency, storefront,
-- product and ownership type, expiry, token, Apple ID, original purchase date) is the winner's, or
-- the other row's when the winner has none; a revocation's type and percentage (StoreKit 2 sources
-- only) are the winner's, or when the winner is a revoked receipt (which has none) the other
-- row's revocation's; a winner without a revocation clears them. Within a batch the rows of one
-- transaction are folded the same way first (ranked by that order, `r`).
--
-- The claims' triggers (migration 0011) then refresh the white rows' claimed_by, claim_token and
-- claim_usernames_name_uploader: the upsert locks the white rows before the claims are written.
-- Reads:  stage_transactions, reconcile.apple_transactions, reconcile.transaction_claims
-- Writes: reconcile.apple_transactions, reconcile.transaction_claims
-- Values: :'run_id' (bigint: the run that saw them).
WITH ranked AS (
    SELECT s.*,
           row_number() OVER (
               PARTITION BY s.transaction_id
               ORDER BY coalesce(s.signed_date, '-infinity'::timestamptz) DESC,
                        coalesce(s.revocation_date, '-infinity'::timestamptz) DESC,
                        coalesce(s.refunded_quantity, -1) DESC,
                        (s.pending IS NOT TRUE) DESC, (s.acknowledged IS TRUE) DESC,
                        coalesce(s.revocation_type, '') COLLATE "C" DESC, coalesce(s.revocation_percentage, -1) DESC,
                        coalesce(s.revocation_reason, -1) DESC, s.source COLLATE "C" DESC,
                        coalesce(s.quantity, -1) DESC, s.product_id COLLATE "C" DESC,
                        s.original_transaction_id COLLATE "C" DESC, s.bundle_id COLLATE "C" DESC,
                        s.environment COLLATE "C" DESC, s.purchase_date DESC,
                        coalesce(s.expires_date, '-infinity'::timestamptz) DESC,
                        coalesce(s.product_type, '') COLLATE "C" DESC, coalesce(s.ownership_type, '') COLLATE "C" DESC,
                        coalesce(s.price_milli, -1) DESC, coalesce(s.currency, '') COLLATE "C" DESC,
                        coalesce(s.storefront, '') COLLATE "C" DESC) AS r
      FROM stage_transactions s
), others AS (
    -- Per transaction, the best-ranked value of each column only some sources carry.
    SELECT transaction_id,
           (array_agg(product_type ORDER BY r) FILTER (WHERE product_type IS NOT NULL))[1] AS product_type,
           (array_agg(original_purchase_date ORDER BY r) FILTER (WHERE original_purchase_date IS NOT NULL))[1]
               AS original_purchase_date,
           (array_agg(expires_date ORDER BY r) FILTER (WHERE expires_date IS NOT NULL))[1] AS expires_date,
           (array_agg(ownership_type ORDER BY r) FILTER (WHERE ownership_type IS NOT NULL))[1] AS ownership_type,
           (array_agg(app_account_token ORDER BY r) FILTER (WHERE app_account_token IS NOT NULL))[1] AS app_account_token,
           (array_agg(web_order_line_item_id ORDER BY r) FILTER (WHERE web_order_line_item_id IS NOT NULL))[1]
               AS web_order_line_item_id,
           (array_agg(price_milli ORDER BY r) FILTER (WHERE price_milli IS NOT NULL))[1] AS price_milli,
           (array_agg(currency ORDER BY r) FILTER (WHERE currency IS NOT NULL))[1] AS currency,
           (array_agg(storefront ORDER BY r) FILTER (WHERE storefront IS NOT NULL))[1] AS storefront,
           (array_agg(app_transaction_id ORDER BY r) FILTER (WHERE app_transaction_id IS NOT NULL))[1]
               AS app_transaction_id,
           (array_agg(obfuscated_account_id ORDER BY r) FILTER (WHERE obfuscated_account_id IS NOT NULL))[1]
               AS obfuscated_account_id,
           (array_agg(purchase_token ORDER BY r) FILTER (WHERE purchase_token IS NOT NULL))[1] AS purchase_token,
           (array_agg(revocation_type ORDER BY r)
               FILTER (WHERE revocation_type IS NOT NULL AND revocation_date IS NOT NULL))[1] AS revocation_type,
           (array_agg(revocation_percentage ORDER BY r)
               FILTER (WHERE revocation_type IS NOT NULL AND revocation_date IS NOT NULL))[1] AS revocation_percentage
      FROM ranked
     GROUP BY transaction_id
)
INSERT INTO reconcile.apple_transactions AS a
    (transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
     purchase_date, original_purchase_date, expires_date, revocation_date, revocation_reason,
     ownership_type, app_account_token, web_order_line_item_id, price_milli, currency, storefront,
     signed_date, source, first_seen_run, last_seen_run, revocation_type, revocation_percentage,
     app_transaction_id, store, obfuscated_account_id, purchase_token, refunded_quantity, acknowledged, pending)
SELECT w.transaction_id, w.original_transaction_id, w.product_id, o.product_type, w.bundle_id, w.environment,
       w.quantity, w.purchase_date, o.original_purchase_date, o.expires_date, w.revocation_date,
       w.revocation_reason, o.ownership_type, o.app_account_token, o.web_order_line_item_id, o.price_milli,
       o.currency, o.storefront, w.signed_date, w.source, :'run_id'::bigint, :'run_id'::bigint,
       CASE WHEN w.revocation_date IS NOT NULL THEN o.revocation_type END,
       CASE WHEN w.revocation_date IS NOT NULL THEN o.revocation_percentage END,
       o.app_transaction_id, w.store, o.obfuscated_account_id, o.purchase_token,
       CASE WHEN w.revocation_date IS NOT NULL THEN w.refunded_quantity END, w.acknowledged, w.pending
  FROM ranked w JOIN others o ON o.transaction_id = w.transaction_id
 WHERE w.r = 1
ON CONFLICT (transaction_id) DO UPDATE SET
    (original_transaction_id, product_id, product_type, bundle_id, environment, quantity, purchase_date,
     original_purchase_date, expires_date, revocation_date, revocation_reason, revocation_type,
     revocation_percentage, ownership_type, app_account_token, web_order_line_item_id, price_milli, currency,
     storefront, app_transaction_id, source, store, obfuscated_account_id, purchase_token, refunded_quantity,
     acknowledged, pending) = (
        SELECT CASE WHEN n.staged THEN EXCLUDED.original_transaction_id ELSE a.original_transaction_id END,
               CASE WHEN n.staged THEN EXCLUDED.product_id ELSE a.product_id END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.product_type, a.product_type)
                    ELSE coalesce(a.product_type, EXCLUDED.product_type) END,
               CASE WHEN n.staged THEN EXCLUDED.bundle_id ELSE a.bundle_id END,
               CASE WHEN n.staged THEN EXCLUDED.environment ELSE a.environment END,
               CASE WHEN n.staged THEN EXCLUDED.quantity ELSE a.quantity END,
               CASE WHEN n.staged THEN EXCLUDED.purchase_date ELSE a.purchase_date END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.original_purchase_date, a.original_purchase_date)
                    ELSE coalesce(a.original_purchase_date, EXCLUDED.original_purchase_date) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.expires_date, a.expires_date)
                    ELSE coalesce(a.expires_date, EXCLUDED.expires_date) END,
               CASE WHEN n.staged THEN EXCLUDED.revocation_date ELSE a.revocation_date END,
               CASE WHEN n.staged THEN EXCLUDED.revocation_reason ELSE a.revocation_reason END,
               -- The winner's revocation type and percentage; a revoked winner that has none (a
               -- receipt) takes the other row's revocation's; an unrevoked winner clears them.
               CASE WHEN n.staged THEN
                        CASE WHEN EXCLUDED.revocation_date IS NULL THEN NULL
                             WHEN EXCLUDED.revocation_type IS NOT NULL THEN EXCLUDED.revocation_type
                             WHEN a.revocation_date IS NOT NULL THEN a.revocation_type END
                    ELSE CASE WHEN a.revocation_date IS NULL THEN NULL
                              WHEN a.revocation_type IS NOT NULL THEN a.revocation_type
                              WHEN EXCLUDED.revocation_date IS NOT NULL THEN EXCLUDED.revocation_type END END,
               CASE WHEN n.staged THEN
                        CASE WHEN EXCLUDED.revocation_date IS NULL THEN NULL
                             WHEN EXCLUDED.revocation_type IS NOT NULL THEN EXCLUDED.revocation_percentage
                             WHEN a.revocation_date IS NOT NULL THEN a.revocation_percentage END
                    ELSE CASE WHEN a.revocation_date IS NULL THEN NULL
                              WHEN a.revocation_type IS NOT NULL THEN a.revocation_percentage
                              WHEN EXCLUDED.revocation_date IS NOT NULL THEN EXCLUDED.revocation_percentage END END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.ownership_type, a.ownership_type)
                    ELSE coalesce(a.ownership_type, EXCLUDED.ownership_type) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.app_account_token, a.app_account_token)
                    ELSE coalesce(a.app_account_token, EXCLUDED.app_account_token) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.web_order_line_item_id, a.web_order_line_item_id)
                    ELSE coalesce(a.web_order_line_item_id, EXCLUDED.web_order_line_item_id) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.price_milli, a.price_milli)
                    ELSE coalesce(a.price_milli, EXCLUDED.price_milli) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.currency, a.currency)
                    ELSE coalesce(a.currency, EXCLUDED.currency) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.storefront, a.storefront)
                    ELSE coalesce(a.storefront, EXCLUDED.storefront) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.app_transaction_id, a.app_transaction_id)
                    ELSE coalesce(a.app_transaction_id, EXCLUDED.app_transaction_id) END,
               CASE WHEN n.staged THEN EXCLUDED.source ELSE a.source END,
               -- Google Play's columns (migration 0029): the store and the winner's refund,
               -- acknowledgement and pending state; the binding and token as the token above.
               CASE WHEN n.staged THEN EXCLUDED.store ELSE a.store END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.obfuscated_account_id, a.obfuscated_account_id)
                    ELSE coalesce(a.obfuscated_account_id, EXCLUDED.obfuscated_account_id) END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.purchase_token, a.purchase_token)
                    ELSE coalesce(a.purchase_token, EXCLUDED.purchase_token) END,
               CASE WHEN n.staged THEN EXCLUDED.refunded_quantity ELSE a.refunded_quantity END,
               CASE WHEN n.staged THEN coalesce(EXCLUDED.acknowledged, a.acknowledged)
                    ELSE coalesce(a.acknowledged, EXCLUDED.acknowledged) END,
               CASE WHEN n.staged THEN EXCLUDED.pending ELSE a.pending END
          -- staged: the batch's row wins, by the order above (the same as `r`'s).
          FROM (SELECT ROW(coalesce(EXCLUDED.signed_date, '-infinity'::timestamptz),
                           coalesce(EXCLUDED.revocation_date, '-infinity'::timestamptz),
                           coalesce(EXCLUDED.refunded_quantity, -1),
                           EXCLUDED.pending IS NOT TRUE, EXCLUDED.acknowledged IS TRUE,
                           coalesce(EXCLUDED.revocation_type, '') COLLATE "C", coalesce(EXCLUDED.revocation_percentage, -1),
                           coalesce(EXCLUDED.revocation_reason, -1), EXCLUDED.source COLLATE "C",
                           coalesce(EXCLUDED.quantity, -1), EXCLUDED.product_id COLLATE "C",
                           EXCLUDED.original_transaction_id COLLATE "C", EXCLUDED.bundle_id COLLATE "C",
                           EXCLUDED.environment COLLATE "C", EXCLUDED.purchase_date,
                           coalesce(EXCLUDED.expires_date, '-infinity'::timestamptz),
                           coalesce(EXCLUDED.product_type, '') COLLATE "C", coalesce(EXCLUDED.ownership_type, '') COLLATE "C",
                           coalesce(EXCLUDED.price_milli, -1), coalesce(EXCLUDED.currency, '') COLLATE "C",
                           coalesce(EXCLUDED.storefront, '') COLLATE "C")
                    >= ROW(coalesce(a.signed_date, '-infinity'::timestamptz),
                           coalesce(a.revocation_date, '-infinity'::timestamptz),
                           coalesce(a.refunded_quantity, -1),
                           a.pending IS NOT TRUE, a.acknowledged IS TRUE,
                           coalesce(a.revocation_type, '') COLLATE "C", coalesce(a.revocation_percentage, -1),
                           coalesce(a.revocation_reason, -1), a.source COLLATE "C",
                           coalesce(a.quantity, -1), a.product_id COLLATE "C",
                           a.original_transaction_id COLLATE "C", a.bundle_id COLLATE "C",
                           a.environment COLLATE "C", a.purchase_date,
                           coalesce(a.expires_date, '-infinity'::timestamptz),
                           coalesce(a.product_type, '') COLLATE "C", coalesce(a.ownership_type, '') COLLATE "C",
                           coalesce(a.price_milli, -1), coalesce(a.currency, '') COLLATE "C",
                           coalesce(a.storefront, '') COLLATE "C") AS staged) n),
    signed_date = greatest(a.signed_date, EXCLUDED.signed_date),
    last_seen_run = EXCLUDED.last_seen_run,
    last_seen_at = now();

INSERT INTO reconcile.transaction_claims
    (transaction_id, upload_id, user_id, application_username, app_account_token, source, run_id)
SELECT DISTINCT ON (transaction_id, upload_id)
       transaction_id, upload_id, user_id, application_username, claim_token, source, :'run_id'::bigint
  FROM stage_transactions WHERE upload_id IS NOT NULL
ON CONFLICT (transaction_id, upload_id) DO NOTHING;
