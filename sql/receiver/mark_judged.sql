-- Stage: transactions a receiver pass judged, in the transaction that wrote their review items.
-- Reads:  nothing
-- Writes: reconcile.receiver_judgements
-- Values: :'run_id' (bigint), :'transaction_ids' (text[]).
UPDATE reconcile.receiver_judgements
   SET judged_at = now(), judged_run = :'run_id'::bigint
 WHERE transaction_id = ANY(:'transaction_ids'::text[]) AND judged_at IS NULL;
