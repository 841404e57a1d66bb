-- Issue 38 (SPEC section 18): Google Play subscriptions' renewals. Google charges a renewal in the
-- background, as an order of its own on the same purchase token (`GPA.…..0`, `..1`, …); the client
-- may never upload it and the app's server may never credit it, and the only answer that names it
-- is subscriptionsv2's latest order. Every run asks subscriptionsv2 again about each subscription
-- whose known period has ended by the run's end (PlayRenewals), and stores every order from the
-- first to the latest that the white table lacks. This table keeps, per token, what Google last
-- said: the latest order, when the period ends, and whether the subscription is over (its period
-- ended and Google says it will not renew), after which it is not asked again.
CREATE TABLE reconcile.play_subscriptions (
    purchase_token text PRIMARY KEY,
    package_name text NOT NULL,
    -- lineItems[].latestSuccessfulOrderId (or latestOrderId), nil when Google named none.
    latest_order_id text,
    -- The latest line item's expiryTime: when the period Google last charged ends.
    expires_at timestamptz,
    -- subscriptionState as Google answered it (SUBSCRIPTION_STATE_ACTIVE, …_EXPIRED, …).
    state text,
    -- Asked no more: the period ended by the asking run's end and Google will not renew it, or
    -- Google no longer knows the token.
    ended boolean NOT NULL DEFAULT false,
    asked_at timestamptz NOT NULL DEFAULT now(),
    run_id bigint REFERENCES reconcile.runs (id)
);
CREATE INDEX play_subscriptions_run_idx ON reconcile.play_subscriptions (run_id);

-- The renewals' candidates: Play subscription rows, by token.
CREATE INDEX apple_transactions_play_subscription_idx ON reconcile.apple_transactions (purchase_token)
    WHERE store = 'google_play' AND product_type = 'auto_renewable';

-- A nightly run judges again every Play purchase whose own binding (obfuscatedAccountId) names an
-- account the night's changes touched (sql/diff/scope/changed_bindings.sql), by equality with the
-- account or its SHA-256, lowercased as the claims' usernames are.
CREATE INDEX apple_transactions_obfuscated_account_lower_idx
    ON reconcile.apple_transactions (lower(obfuscated_account_id)) WHERE obfuscated_account_id IS NOT NULL;
