-- Stage: whether a stored notification waits to be applied (the receiver stored it, or the app's
-- own endpoint did), or a Notification History record the hourly sync accepted (state
-- 'accepted': nobody applied it yet): a receiver pass records a run only when there is work.
-- Reads:  reconcile.notifications, reconcile.notification_verifications, reconcile.notification_history
-- Writes: nothing
-- Values: none.
--
-- Asked every few seconds, so it reads indexes rather than the whole table: rows past the last
-- one verified (by id), and rows received in the last day (by received_at). A row committed late
-- below the last id verified, with an older received_at, is applied by the next pass that has work
-- or by the nightly run.
SELECT EXISTS (
    SELECT 1 FROM reconcile.notifications n
     WHERE n.id > coalesce((SELECT max(notification_id) FROM reconcile.notification_verifications), 0)
) OR EXISTS (
    SELECT 1 FROM reconcile.notifications n
     WHERE n.received_at > now() - interval '1 day'
       AND NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                        WHERE v.notification_id = n.id AND v.state <> 'retry')
) OR EXISTS (
    -- notification_history_accepted_idx: the few rows a sync stored since the last pass.
    SELECT 1 FROM reconcile.notification_history h WHERE h.state = 'accepted'
);
