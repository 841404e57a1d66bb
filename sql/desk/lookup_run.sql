-- Records the desk's lookup as a run of kind `lookup`: dry and finished at once, so that it moves
-- no watermark and no worker joins it; returns its id.
-- Reads:  nothing.
-- Writes: reconcile.runs (a new row)
-- Values: :'environment' (text), :'host' (text), :'pid' (integer).
INSERT INTO reconcile.runs (kind, status, window_until, environment, dry_run, finished_at, host, pid)
VALUES ('lookup', 'completed', now(), :'environment'::text, true, now(), :'host'::text, :'pid'::integer)
RETURNING id;
