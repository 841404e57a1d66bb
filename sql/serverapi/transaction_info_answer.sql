-- Records Get Transaction Info's answer about a transaction: found, not found (judged), or to be
-- asked again ('retry', with why).
-- Reads:  reconcile.transaction_lookups
-- Writes: reconcile.transaction_lookups (one more attempt)
-- Values: :'transaction_id' (text), :'result' (text: found, not_found or retry),
--         :'last_error' (text, or null), :'run_id' (bigint).
INSERT INTO reconcile.transaction_lookups (transaction_id, result, attempts, last_error, run_id)
VALUES (:'transaction_id'::text, :'result'::text, 1, :'last_error'::text, :'run_id'::bigint)
ON CONFLICT ((reconcile.text_digest(transaction_id))) DO UPDATE
SET result = EXCLUDED.result, last_error = EXCLUDED.last_error,
    attempts = reconcile.transaction_lookups.attempts + 1, run_id = EXCLUDED.run_id,
    checked_at = now();
