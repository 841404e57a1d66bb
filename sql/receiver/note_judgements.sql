-- Stage: the transactions one batch of notifications applied in a receiver pass brought, queued
-- for judgement once their grace period has passed.
-- Reads:  reconcile.notification_verifications, reconcile.apple_transactions
-- Writes: reconcile.receiver_judgements
-- Values: :'notification_ids' (bigint[]) — the stored notifications of the batch;
--         :'grace_seconds' (double precision) — RECONCILE_GRACE.
--
-- Run in the batch's transaction (NotificationApplier.applyEndpoint's withEachBatch): a notification
-- applied is noted with it or not at all, so a pass that fails after a batch committed leaves
-- nothing applied that no later pass would judge (a later pass finds it no longer pending).
--
-- A purchase is judged no sooner than the nightly run would judge it (SPEC section 5: purchased
-- at least the grace period before); a refund of an older purchase at once. A transaction a
-- later notification brings again is judged again.
INSERT INTO reconcile.receiver_judgements (transaction_id, due_at)
SELECT DISTINCT ON (a.transaction_id) a.transaction_id,
       greatest(now(), a.purchase_date + make_interval(secs => :'grace_seconds'::double precision))
  FROM reconcile.notification_verifications v
  JOIN reconcile.apple_transactions a ON a.transaction_id = v.transaction_id
 WHERE v.notification_id = ANY(:'notification_ids'::bigint[]) AND v.state = 'applied'
 ORDER BY a.transaction_id
ON CONFLICT (transaction_id) DO UPDATE
   SET due_at = EXCLUDED.due_at, noted_at = now(), judged_at = NULL, judged_run = NULL;
