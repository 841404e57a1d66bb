-- Whether the white table holds a Google Play order id, and when the ledger last credited it
-- (null when no unrevoked delivery does): the desk asks Google's Orders API only about an order
-- id the job does not hold (SPEC section 18).
-- Reads:  reconcile.apple_transactions, :deliveries
-- Writes: nothing.
-- Values: :'order_id' (text).
SELECT EXISTS (SELECT 1 FROM reconcile.apple_transactions a
                WHERE a.transaction_id = :'order_id'::text AND a.store = 'google_play') AS held,
       (SELECT max(d.delivered_at) FROM :deliveries d
         WHERE d.transaction_id = :'order_id'::text AND d.revoked_at IS NULL) AS delivered_at;
