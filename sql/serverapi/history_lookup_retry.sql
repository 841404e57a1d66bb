-- Apple could not answer an account's history now: the next run asks again with this seed.
-- Reads:  reconcile.history_lookups
-- Writes: reconcile.history_lookups (result 'retry', one more attempt)
-- Values: :'user_id' (text), :'transaction_id' (text: the seed), :'upload_id' (bigint: the
--         upload that carried it), :'last_error' (text), :'run_id' (bigint).
INSERT INTO reconcile.history_lookups
    (user_id, transaction_id, upload_id, result, last_error, run_id)
VALUES (:'user_id'::text, :'transaction_id'::text, :'upload_id'::bigint, 'retry', :'last_error'::text,
        :'run_id'::bigint)
ON CONFLICT ((reconcile.text_digest(user_id))) DO UPDATE
SET transaction_id = EXCLUDED.transaction_id, upload_id = EXCLUDED.upload_id, result = 'retry',
    last_error = EXCLUDED.last_error,
    run_id = EXCLUDED.run_id, attempts = reconcile.history_lookups.attempts + 1,
    updated_at = now();
