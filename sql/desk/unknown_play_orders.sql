-- The customer's Google Play ledger order ids (the first 100) no verified source holds and the
-- Orders API has not answered for good, with when the ledger last credited each: the nightly
-- run's own orders.get lookup (PlayOrderLookups), asked by the desk.
-- Reads:  :deliveries, reconcile.apple_transactions, reconcile.transaction_lookups
-- Writes: nothing.
-- Values: :'transaction_ids' (text[]).
SELECT d.transaction_id, max(d.delivered_at) AS delivered_at
  FROM :deliveries d
 WHERE d.transaction_id = ANY (:'transaction_ids'::text[]) AND d.revoked_at IS NULL
   AND reconcile.ledger_store(to_jsonb(d) ->> 'store', d.transaction_id) = 'google_play'
   AND NOT EXISTS (SELECT 1 FROM reconcile.apple_transactions a
                    WHERE a.transaction_id = d.transaction_id AND a.store = 'google_play')
   AND NOT EXISTS (SELECT 1 FROM reconcile.transaction_lookups l
                    WHERE l.transaction_id = d.transaction_id AND l.result IN ('found', 'not_found'))
 GROUP BY d.transaction_id
 ORDER BY 1 LIMIT 100;
