-- Stage: whether a notification stored in the last day waits to be applied (the receiver stored
-- it, or the app's own endpoint did): a receiver pass records a run only when there is work.
-- Reads:  reconcile.notifications, reconcile.notification_verifications
-- Writes: nothing
-- Values: none.
--
-- Asked every few seconds, so it reads the received_at index rather than the whole table; an
-- older row nobody applied (stored with an old received_at) is the nightly run's to apply.
SELECT EXISTS (
    SELECT 1 FROM reconcile.notifications n
     WHERE n.received_at > now() - interval '1 day'
       AND NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                        WHERE v.notification_id = n.id AND v.state <> 'retry')
);
