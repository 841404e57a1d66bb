-- One notification body stored by a bare single-row INSERT, committed on its own: what PostgreSQL
-- takes at most, the yardstick of the receiver's notifications stored per second.
-- Reads:  nothing.
-- Writes: reconcile_bench_bare_notifications
-- Values: :'body' (text), :'notification_uuid' (uuid).
INSERT INTO reconcile_bench_bare_notifications (signed_payload, notification_uuid)
VALUES (:'body'::text, :'notification_uuid'::uuid);
