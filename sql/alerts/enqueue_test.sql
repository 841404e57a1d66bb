-- Queues `reconcile check --alert-test`'s message (no run).
-- Reads:  nothing
-- Writes: reconcile.alerts
-- Values: :'message' (jsonb).
-- Returns: id (bigint).
INSERT INTO reconcile.alerts (message) VALUES (:'message'::jsonb) RETURNING id;
