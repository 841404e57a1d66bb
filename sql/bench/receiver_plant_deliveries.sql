-- The ledger of reconcile-bench receiver's latencies: each pack credited to its account a day after
-- it was bought (all of it used), and the consent to share consumption data of the accounts whose
-- refund requests are answered.
-- Reads:  nothing.
-- Writes: reconcile.deliveries, reconcile.refund_consent
-- Values: :'transaction_ids', :'user_ids' (text[], pairwise: who got each pack), :'product_id' (text),
--         :'consenting' (text[]: the accounts that consented).
INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at, consumed_milli)
SELECT transaction_id, user_id, :'product_id'::text, 1, now() - interval '20 hours', 100000
  FROM unnest(:'transaction_ids'::text[], :'user_ids'::text[]) AS credited(transaction_id, user_id);

INSERT INTO reconcile.refund_consent (user_id, consented_at)
SELECT user_id, now() - interval '1 day' FROM unnest(:'consenting'::text[]) AS consenting(user_id);
