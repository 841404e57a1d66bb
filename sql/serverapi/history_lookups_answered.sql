-- The accounts whose histories Apple answered (or refused for good) this page are settled.
-- Reads:  reconcile.history_lookups
-- Writes: reconcile.history_lookups (result 'answered')
-- Values: :'user_ids' (text[]), :'run_id' (bigint).
UPDATE reconcile.history_lookups
   SET result = 'answered', last_error = NULL, run_id = :'run_id'::bigint, updated_at = now()
 WHERE user_id = ANY(:'user_ids'::text[]) AND result = 'retry';
