-- Get Transaction History calls the App Store Server API could not answer (rate limited, down,
-- timed out), one row per account: while `result` is 'retry', every run asks for the account's
-- history again, whatever it verifies itself (SPEC section 3: the next run tries again what
-- failed). Rows are updated, never deleted: the job's role needs no DELETE.
CREATE TABLE reconcile.history_lookups (
    user_id text PRIMARY KEY,
    -- the seed: the newest transaction of the app the account carried, and the upload it came in
    transaction_id text NOT NULL,
    upload_id bigint NOT NULL,
    result text NOT NULL CHECK (result IN ('retry', 'answered')),
    attempts integer NOT NULL DEFAULT 1,
    last_error text,
    run_id bigint REFERENCES reconcile.runs (id),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX history_lookups_retry_idx ON reconcile.history_lookups (user_id) WHERE result = 'retry';
