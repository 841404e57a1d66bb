-- How many notifications the receiver has stored (reconcile-bench receiver checks it stored all).
-- Reads:  reconcile.notifications
-- Writes: nothing.
-- Values: none.
SELECT count(*)::integer FROM reconcile.notifications;
