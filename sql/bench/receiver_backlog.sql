-- How many stored notifications the receiver's worker has not applied yet (reconcile-bench receiver
-- waits for none before it measures a notification's way to its item).
-- Reads:  reconcile.notifications, reconcile.notification_verifications
-- Writes: nothing.
-- Values: none.
SELECT count(*)::integer FROM reconcile.notifications n
 WHERE NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                    WHERE v.notification_id = n.id AND v.state <> 'retry');
