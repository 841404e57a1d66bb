-- Stage: what the receiver's metrics file shows (reconcile notifications receive --metrics-file).
-- Reads:  reconcile.notifications, reconcile.notification_verifications, reconcile.notification_forwards,
--         reconcile.consumption_answers, reconcile.notifications_seen, reconcile.review_items, reconcile.runs
-- Writes: nothing
-- Values: none.
--
-- One row per sample: the metric's name, its label value ('' for none) and the value.
-- Notifications the receiver stored, by type ('pending' until applied, 'invalid' if a later
-- verification refused it: the roots changed).
SELECT 'received' AS metric, coalesce(v.notification_type, v.state, 'pending') AS label, count(*)::float8 AS value
  FROM reconcile.notifications n
  LEFT JOIN reconcile.notification_verifications v ON v.notification_id = n.id
 WHERE n.notification_uuid IS NOT NULL
 GROUP BY 2
-- Copies for the app's endpoint: delivered, failing (tried and not yet delivered), waiting (never tried).
UNION ALL
SELECT 'forwards', CASE WHEN forwarded_at IS NOT NULL THEN 'forwarded' WHEN attempts > 0 THEN 'failing' ELSE 'waiting' END,
       count(*)::float8
  FROM reconcile.notification_forwards
 GROUP BY 2
-- Seconds from a refund request's arrival to the answer sent, over the last day.
UNION ALL
SELECT 'consumption_answer_seconds', q.quantile, q.seconds
  FROM (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM c.created_at - s.seen_at)) AS p50,
               percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM c.created_at - s.seen_at)) AS p95,
               max(extract(epoch FROM c.created_at - s.seen_at)) AS most
          FROM reconcile.consumption_answers c
          JOIN reconcile.notifications_seen s ON s.notification_uuid = c.request_uuids[1]
         WHERE c.status = 'answered' AND c.created_at > now() - interval '1 day') a
  CROSS JOIN LATERAL (VALUES ('0.5', a.p50), ('0.95', a.p95), ('1', a.most)) AS q(quantile, seconds)
 WHERE q.seconds IS NOT NULL
-- Review items the receiver opened since the last nightly run finished.
UNION ALL
SELECT 'items_opened_since_nightly', '', count(*)::float8
  FROM reconcile.review_items i JOIN reconcile.runs r ON r.id = i.first_seen_run
 WHERE r.kind = 'receiver'
   AND i.first_seen_run > (SELECT coalesce(max(id), 0) FROM reconcile.runs
                            WHERE kind = 'run' AND status IN ('completed', 'completed_with_unresolved') AND NOT dry_run);
