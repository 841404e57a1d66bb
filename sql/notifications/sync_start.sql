-- A Notification History sync begins: the window it asks Apple about.
-- Reads:  nothing.
-- Writes: reconcile.notification_syncs
-- Values: :'environment' (text), :'since' (timestamptz), :'until' (timestamptz), :'run_id' (bigint, null:
--         a sync outside a run).
INSERT INTO reconcile.notification_syncs (environment, since, until, run_id)
VALUES (:'environment'::text, :'since'::timestamptz, :'until'::timestamptz, :'run_id'::bigint)
RETURNING id;
