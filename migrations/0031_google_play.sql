-- Issue 38 (SPEC section 18): Google Play's own state.

-- Every void Google's voided-purchases list (purchases.voidedpurchases, type=1 with
-- includeQuantityBasedPartialRefund) or a voidedPurchaseNotification reported, once: the list is
-- read over overlapping windows, so the same void arrives again and is kept once, keyed by its
-- order and when Google voided it. A full void has no quantity; a quantity-based partial refund
-- says how many units it took (voidedQuantity), and an order's partial refunds add up.
CREATE TABLE reconcile.play_voided_purchases (
    order_id text NOT NULL,
    voided_at timestamptz NOT NULL,
    purchase_token text NOT NULL,
    package_name text NOT NULL,
    purchased_at timestamptz,
    voided_quantity integer CHECK (voided_quantity IS NULL OR voided_quantity > 0),
    -- 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental, 5 fraud, 6 friendly fraud,
    -- 7 chargeback, 8 unacknowledged (Google refunded a purchase nobody acknowledged in 3 days).
    voided_reason integer,
    -- 0 user, 1 developer, 2 Google.
    voided_source integer,
    first_seen_run bigint REFERENCES reconcile.runs (id),
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (order_id, voided_at)
);
CREATE INDEX play_voided_purchases_token_idx ON reconcile.play_voided_purchases (purchase_token);

-- How far each package's voided-purchases list has been read: the next read starts here minus an
-- overlap, and at most the 30 days Google keeps (a longer gap is reported and repaired).
CREATE TABLE reconcile.play_voided_sync (
    package_name text PRIMARY KEY,
    synced_until timestamptz NOT NULL,
    synced_at timestamptz NOT NULL DEFAULT now(),
    run_id bigint REFERENCES reconcile.runs (id)
);
