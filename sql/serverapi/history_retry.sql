-- Apple did not answer the history seeded with a transaction no upload carried (down, or an
-- answer that fails its checks): the next run asks again.
-- Reads:  reconcile.history_retries
-- Writes: reconcile.history_retries
-- Values: :'transaction_id' (text: the seed), :'run_id' (bigint).
INSERT INTO reconcile.history_retries (transaction_id, run_id) VALUES (:'transaction_id'::text, :'run_id'::bigint)
ON CONFLICT ((reconcile.text_digest(transaction_id))) DO UPDATE SET run_id = EXCLUDED.run_id;
