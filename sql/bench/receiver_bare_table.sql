-- The yardstick of reconcile-bench receiver: a table with reconcile.notifications' columns, defaults
-- and indexes (the unique notificationUUID among them), empty, for the bare single-row INSERTs the
-- receiver's rate is compared with.
-- Reads:  reconcile.notifications (its definition)
-- Writes: reconcile_bench_bare_notifications (dropped and created)
-- Values: none.
DROP TABLE IF EXISTS reconcile_bench_bare_notifications;
CREATE TABLE reconcile_bench_bare_notifications (LIKE reconcile.notifications INCLUDING ALL);
