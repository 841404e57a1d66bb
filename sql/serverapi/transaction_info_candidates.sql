-- The next 500 delivered transactions (by id, after :'after') to ask Get Transaction Info about,
-- with when each was last credited: deliveries of the window, of the ledger's changes since the
-- last finished run (SPEC section 5: a backdated credit of a transaction Apple never issued is
-- asked about the night it is written, as the diff judges it, or its unverified_delivery would
-- wait for an answer nobody asks), of the open items of the kinds that ask Apple while open
-- (FindingKind.asksAppleWhileOpen: unverified_delivery), and every lookup an earlier
-- run could not finish (Apple put it off, or the purchase was too young), whatever the window;
-- none that a verified source contains or that Apple answered for good. Shared by both stores'
-- lookups (SPEC section 18): Google Play's Orders API asks the same of Play's ledger order ids,
-- under the package names, and only once every upload of the delivery's account is verified (an
-- upload still being verified may hold the order: Google's daily Orders quota is not spent on it).
-- Reads:  :deliveries, reconcile.review_items, reconcile.transaction_lookups, reconcile.ledger_changes,
--         reconcile.apple_transactions, reconcile.upload_verifications, :uploads
-- Writes: nothing.
-- Values: :'since' (timestamptz: the window's start, year 1 for the whole history),
--         :'bundle_ids' (text[]), :'after' (text: the last transaction id of the previous page,
--         '' at first), :'ledger_changes_after' (pg_snapshot: the last finished run's),
--         :'unconfirmed_kinds' (text[]: the kinds whose open items are asked about),
--         :'store' (text: app_store for Get Transaction Info, google_play for orders.get; the
--         apps are then the package names), :'users_verified' (boolean: only deliveries whose
--         account has no upload pending or retrying).
SELECT d.transaction_id, max(d.delivered_at) AS delivered_at
  FROM :deliveries d
 -- Google Play's revoked credits too: a purchase whose credit the app took back without a refund
 -- is a missed_delivery, whether the order was asked before the revocation (a chain of nightly
 -- runs) or after it (one run over the whole history).
 WHERE (d.revoked_at IS NULL OR :'store'::text = 'google_play') AND d.transaction_id > :'after'::text
   -- Each store is asked about its own ledger rows only (SPEC section 18: the `store` column,
   -- which an operator's relation may lack, else the id's form).
   AND reconcile.ledger_store(to_jsonb(d) ->> 'store', d.transaction_id) = :'store'::text
   AND (d.delivered_at >= :'since'::timestamptz
        OR d.transaction_id IN (SELECT transaction_id FROM reconcile.review_items
                                 WHERE kind = ANY(:'unconfirmed_kinds'::text[]) AND status IN ('open', 'in_review', 'awaiting_approval'))
        OR d.transaction_id IN (SELECT transaction_id FROM reconcile.transaction_lookups
                                 WHERE result = 'retry')
        OR d.transaction_id IN (
               SELECT transaction_id FROM reconcile.ledger_changes
                WHERE changed_xact >= pg_snapshot_xmin(:'ledger_changes_after'::pg_snapshot)::text::bigint
                  AND NOT pg_visible_in_snapshot(changed_xact::text::xid8, :'ledger_changes_after'::pg_snapshot)))
   AND NOT EXISTS (SELECT 1 FROM reconcile.apple_transactions a
                    WHERE a.transaction_id = d.transaction_id AND a.bundle_id = ANY(:'bundle_ids'::text[]))
   AND NOT EXISTS (SELECT 1 FROM reconcile.transaction_lookups l
                    WHERE l.transaction_id = d.transaction_id AND l.result IN ('found', 'not_found'))
   AND NOT (:'users_verified'::boolean AND EXISTS (
            SELECT 1 FROM :uploads u JOIN reconcile.upload_verifications v ON v.upload_id = u.id
             WHERE u.user_id = d.user_id AND v.state IN ('pending', 'retry')))
 GROUP BY d.transaction_id
 ORDER BY d.transaction_id
 LIMIT 500;
