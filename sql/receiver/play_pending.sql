-- Stage: whether a Play notification waits to be asked of the Developer API now: a receiver
-- pass records a run only when there is work.
-- Reads:  reconcile.play_notifications
-- Writes: nothing
-- Values: none.
SELECT EXISTS (SELECT 1 FROM reconcile.play_notifications WHERE state = 'pending' AND next_attempt_at <= now());
