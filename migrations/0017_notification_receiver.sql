-- The notification receiver (SPEC section 16, issue 26): `reconcile notifications receive` takes
-- Apple's App Store Server Notifications V2 itself, stores each verified one once, forwards it to
-- the app's own endpoint from a durable queue, and judges the transactions they bring the same
-- hour.
--
-- 1. reconcile.notifications (the app may still fill it) learns the notificationUUID of what the
--    receiver stored, so that Apple's retries of one notification are one row. The app's own rows
--    leave it NULL; the applier deduplicates them by their verified UUID as before.
-- 2. reconcile.notification_forwards: one row per stored notification to forward to
--    RECONCILE_NOTIFICATION_FORWARD_URL, written in the transaction that stores it (a receiver
--    killed after Apple's 200 forwards after its restart). `next_attempt_at` is also the lease of
--    a pass that is sending it: no row lock is held across the network.
-- 3. reconcile.receiver_judgements: the transactions the receiver's notifications brought, each
--    judged once its grace period has passed (`due_at`), again whenever a later notification
--    brings it.
-- 4. reconcile.runs.kind gains 'receiver': what the receiver applied and judged is recorded as
--    runs of their own (finished, and never a nightly run's watermark).

ALTER TABLE reconcile.notifications ADD COLUMN notification_uuid uuid;
CREATE UNIQUE INDEX notifications_uuid_idx ON reconcile.notifications (notification_uuid)
    WHERE notification_uuid IS NOT NULL;

CREATE TABLE reconcile.notification_forwards (
    notification_id bigint PRIMARY KEY REFERENCES reconcile.notifications (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz,
    last_status integer,
    last_error text,
    forwarded_at timestamptz
);
CREATE INDEX notification_forwards_due_idx ON reconcile.notification_forwards (next_attempt_at, notification_id)
    WHERE forwarded_at IS NULL;

CREATE TABLE reconcile.receiver_judgements (
    transaction_id text PRIMARY KEY,
    due_at timestamptz NOT NULL,
    noted_at timestamptz NOT NULL DEFAULT now(),
    judged_at timestamptz,
    judged_run bigint REFERENCES reconcile.runs (id)
);
CREATE INDEX receiver_judgements_due_idx ON reconcile.receiver_judgements (due_at) WHERE judged_at IS NULL;

ALTER TABLE reconcile.runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE reconcile.runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('run', 'lookup', 'receiver'));
