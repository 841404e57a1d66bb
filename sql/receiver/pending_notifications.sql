-- Stage: whether a stored notification waits to be applied (the receiver stored it, or the app's
-- own endpoint did): a receiver pass records a run only when there is work.
-- Reads:  reconcile.notifications, reconcile.notification_verifications
-- Writes: nothing
-- Values: none.
SELECT EXISTS (
    SELECT 1 FROM reconcile.notifications n
     WHERE NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                        WHERE v.notification_id = n.id AND v.state <> 'retry')
);
