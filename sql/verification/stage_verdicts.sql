-- The session's empty staging table for a batch's verdicts, which arrive by COPY
-- (copy_verdicts.sql) and are applied by one statement (apply_verdicts.sql).
-- Reads:  nothing.
-- Writes: stage_verdicts (a session table, emptied)
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS stage_verdicts (
    upload_id bigint, state text, method text, apple_status integer, error_code text, last_error text,
    environment text, bundle_id text, attempts integer, next_attempt_at timestamptz, store text
);

TRUNCATE stage_verdicts;
