-- Keeps what run :'run_id''s alert check measured and, when a rule fired, queues its message,
-- in one statement: a run checked twice (its check retried) keeps the first check and one alert.
-- Reads:  reconcile.alert_checks, reconcile.alerts
-- Writes: reconcile.alert_checks, reconcile.alerts
-- Values: :'run_id' (bigint); :'measures' (jsonb); :'message' (jsonb): null when nothing fired.
-- Returns: recorded (boolean: false when the run was checked already), alert_id (bigint, null
--          when nothing was queued).
WITH checked AS (
    INSERT INTO reconcile.alert_checks (run_id, measures)
    VALUES (:'run_id'::bigint, :'measures'::jsonb)
    ON CONFLICT (run_id) DO NOTHING
    RETURNING run_id
), queued AS (
    INSERT INTO reconcile.alerts (run_id, message)
    SELECT run_id, :'message'::jsonb FROM checked WHERE :'message'::jsonb IS NOT NULL
    ON CONFLICT (run_id) DO NOTHING
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM checked) AS recorded, (SELECT id FROM queued) AS alert_id;
