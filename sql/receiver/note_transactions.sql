-- Stage: the transactions of one batch of Notification History records a receiver pass applied
-- (the hourly sync stored them; nobody applied them yet), queued for judgement once their grace
-- period has passed, as note_judgements.sql does for the notifications the receiver stored.
-- Reads:  reconcile.apple_transactions
-- Writes: reconcile.receiver_judgements
-- Values: :'transaction_ids' (text[]) — the transactions the batch applied;
--         :'grace_seconds' (double precision) — RECONCILE_GRACE.
--
-- Run in the batch's transaction (NotificationApplier.applyHistory's withEachBatch): a record
-- applied is noted with it or not at all.
INSERT INTO reconcile.receiver_judgements (transaction_id, due_at)
SELECT DISTINCT ON (a.transaction_id) a.transaction_id,
       greatest(now(), a.purchase_date + make_interval(secs => :'grace_seconds'::double precision))
  FROM reconcile.apple_transactions a
 WHERE a.transaction_id = ANY(:'transaction_ids'::text[])
 ORDER BY a.transaction_id
ON CONFLICT (transaction_id) DO UPDATE
   SET due_at = EXCLUDED.due_at, noted_at = now(), judged_at = NULL, judged_run = NULL;
