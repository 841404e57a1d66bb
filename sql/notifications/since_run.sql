-- For a run's report: notifications synced and undelivered, refund requests answered or expired,
-- and Apple's refund decisions, since the end of the last finished run (everything when none).
-- Reads:  reconcile.runs, reconcile.notification_syncs, reconcile.consumption_answers
-- Writes: nothing.
-- Values: :'resumes_after' (bigint: the last finished run; none matches when there is none).
WITH previous AS (
    SELECT coalesce((SELECT coalesce(finished_at, started_at) FROM reconcile.runs WHERE id = :'resumes_after'::bigint),
                    '-infinity') AS since_at
)
SELECT (SELECT coalesce(sum(stored), 0) FROM reconcile.notification_syncs, previous
         WHERE started_at > previous.since_at)::int AS synced,
       (SELECT coalesce(sum(undelivered), 0) FROM reconcile.notification_syncs, previous
         WHERE started_at > previous.since_at)::int AS undelivered,
       (SELECT count(*) FROM reconcile.consumption_answers, previous
         WHERE status = 'answered' AND created_at > previous.since_at)::int AS answered,
       (SELECT count(*) FROM reconcile.consumption_answers, previous
         WHERE status = 'expired' AND created_at > previous.since_at)::int AS expired,
       (SELECT count(*) FROM reconcile.consumption_answers, previous
         WHERE outcome = 'refunded' AND updated_at > previous.since_at)::int AS refunded,
       (SELECT count(*) FROM reconcile.consumption_answers, previous
         WHERE outcome = 'declined' AND updated_at > previous.since_at)::int AS declined;
