-- Issue 39 (SPEC section 19): alerts to the team's chat after every run. `alert_checks` keeps
-- what each run's check measured, so that the next one sends only what is new (a count that
-- grew, a segment newly flagged); `alerts` is the durable queue of messages, each sent at least
-- once: a webhook that is down leaves its row for the next run.
CREATE TABLE reconcile.alert_checks (
    run_id bigint PRIMARY KEY REFERENCES reconcile.runs (id),
    measures jsonb NOT NULL,
    checked_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE reconcile.alerts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The run whose check fired; null for `reconcile check --alert-test`.
    run_id bigint UNIQUE REFERENCES reconcile.runs (id),
    -- The message as the team reads it (title, lines, link, the rules that fired), in the staff's
    -- language; the body of the webhook's format is made from it when it is sent, so that a
    -- signature's timestamp is fresh.
    message jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    -- A sender's lease: no other sender takes the row before it ends.
    next_attempt_at timestamptz,
    sent_at timestamptz
);
CREATE INDEX alerts_unsent_idx ON reconcile.alerts (id) WHERE sent_at IS NULL;
