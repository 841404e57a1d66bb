-- The customer's transactions (the first 100) that no verified source holds and Get Transaction
-- Info has not answered for good, with when the ledger last credited each (null when it did
-- not): the nightly run's own lookup for ledger rows, asked by the desk. Google Play's order ids
-- (`GPA.…`) and transactions are not Apple's to answer.
-- Reads:  :deliveries, reconcile.apple_transactions, reconcile.transaction_lookups
-- Writes: nothing.
-- Values: :'transaction_ids' (text[]), :'bundle_ids' (text[]).
SELECT s.id, (SELECT max(d.delivered_at) FROM :deliveries d
               WHERE d.transaction_id = s.id AND d.revoked_at IS NULL) AS delivered_at
  FROM unnest(:'transaction_ids'::text[]) s(id)
 WHERE s.id NOT LIKE 'GPA.%'
   AND NOT EXISTS (SELECT 1 FROM reconcile.apple_transactions a
                    WHERE a.transaction_id = s.id
                      AND (a.store = 'google_play' OR a.bundle_id = ANY(:'bundle_ids'::text[])))
   AND NOT EXISTS (SELECT 1 FROM reconcile.transaction_lookups l
                    WHERE l.transaction_id = s.id AND l.result IN ('found', 'not_found'))
 ORDER BY 1 LIMIT 100;
