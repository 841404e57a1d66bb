-- Records a run as running; returns its id.
-- Reads:  nothing.
-- Writes: reconcile.runs (a new row)
-- Values: :'since' (timestamptz, null for the beginning), :'until' (timestamptz),
--         :'environment' (text), :'dry_run' (boolean), :'host' (text), :'pid' (integer).
INSERT INTO reconcile.runs (window_since, window_until, environment, dry_run, host, pid)
VALUES (:'since'::timestamptz, :'until'::timestamptz, :'environment'::text, :'dry_run'::boolean, :'host'::text,
        :'pid'::integer)
RETURNING id;
