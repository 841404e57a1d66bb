-- Stage: the transactions whose judgement is due (their grace period has passed), oldest first.
-- Reads:  reconcile.receiver_judgements
-- Writes: nothing
-- Values: :'limit' (integer) — the most one pass judges.
SELECT transaction_id FROM reconcile.receiver_judgements
 WHERE judged_at IS NULL AND due_at <= now()
 ORDER BY due_at, transaction_id
 LIMIT :'limit'::integer;
