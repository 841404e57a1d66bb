-- Records a run as ended without finishing (failed or interrupted), with why.
-- Reads:  nothing.
-- Writes: reconcile.runs (status, finished_at, error)
-- Values: :'run_id' (bigint), :'status' (text), :'error' (text).
UPDATE reconcile.runs SET status = :'status'::text, finished_at = now(), error = :'error'::text
 WHERE id = :'run_id'::bigint;
