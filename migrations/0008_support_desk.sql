-- The support desk (SPEC section 13): what `reconcile lookup` asked Apple, the desk's own
-- entries in the runs ledger, the indexes a one-customer lookup reads, and the outbox's delivery
-- and consumption columns.

-- A lookup that stored Apple's answers or enqueued findings is recorded as a run of kind
-- 'lookup' (always dry_run, never 'running'): the rows it wrote need a run, the next nightly run
-- takes them into its scope like the work of any run since the last finished one, and neither
-- the watermark nor `reconcile run --worker` ever sees it.
ALTER TABLE reconcile.runs ADD COLUMN kind text NOT NULL DEFAULT 'run' CHECK (kind IN ('run', 'lookup'));

-- Look Up Order ID answers: one row per order asked, and the transactions Apple said it holds.
CREATE TABLE reconcile.order_lookups (
    order_id text PRIMARY KEY,
    status text NOT NULL CHECK (status IN ('valid', 'invalid')),
    run_id bigint REFERENCES reconcile.runs (id),
    checked_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE reconcile.order_transactions (
    order_id text NOT NULL REFERENCES reconcile.order_lookups (order_id),
    transaction_id text NOT NULL,
    PRIMARY KEY (order_id, transaction_id)
);
CREATE INDEX order_transactions_transaction_idx ON reconcile.order_transactions (transaction_id);

-- Lookups by app account token, and the customer's picture of who carried what.
CREATE INDEX apple_transactions_token_idx ON reconcile.apple_transactions (app_account_token)
    WHERE app_account_token IS NOT NULL;
CREATE INDEX transaction_claims_token_idx ON reconcile.transaction_claims (app_account_token)
    WHERE app_account_token IS NOT NULL;
CREATE INDEX notification_verifications_transaction_idx ON reconcile.notification_verifications (transaction_id);

-- The outbox as the app consumes it: delivered by the optional webhook, consumed when acked.
ALTER TABLE reconcile.action_outbox
    ADD COLUMN delivered_at timestamptz,
    ADD COLUMN delivery_attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN last_delivery_error text,
    ADD COLUMN next_delivery_at timestamptz;
CREATE INDEX action_outbox_undelivered_idx ON reconcile.action_outbox (id) WHERE delivered_at IS NULL;
