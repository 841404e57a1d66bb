-- Every answer about these transactions, or to requests about this account's purchases, newest
-- first.
-- Reads:  reconcile.consumption_answers
-- Writes: nothing.
-- Values: :'transaction_ids' (text[]), :'user_id' (text, null).
SELECT id, transaction_id, user_id, requested_at, created_at, status, body::text, apple_error, outcome, decided_at
  FROM reconcile.consumption_answers
 WHERE transaction_id = ANY(:'transaction_ids'::text[]) OR user_id = :'user_id'::text
 ORDER BY requested_at DESC, id DESC;
