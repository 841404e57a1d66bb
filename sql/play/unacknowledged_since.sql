-- Voids Google made for want of an acknowledgement (voidedReason 8) that the job learnt of after
-- the last finished run: read by this run or by a notifications sync, a notification or a desk
-- lookup since, so that the nightly report says so whoever read them first.
-- Reads:  reconcile.play_voided_purchases
-- Writes: nothing.
-- Values: :'after' (bigint: the last finished run).
SELECT count(*) FROM reconcile.play_voided_purchases
 WHERE voided_reason = 8 AND (first_seen_run IS NULL OR first_seen_run > :'after'::bigint);
