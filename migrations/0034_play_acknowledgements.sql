-- Issue 38 (SPEC section 18): the acknowledgement rescue. Google refunds a purchase nobody
-- acknowledged within three days (voidedReason 8); with RECONCILE_PLAY_ACKNOWLEDGE=on the job
-- acknowledges a paid purchase the ledger delivered to its buyer. Each purchase token the job
-- settled is kept here once, with what Google answered, so that an acknowledgement is counted once
-- and can be audited: `acknowledged` (the job acknowledged it), `already_acknowledged` (Google said
-- it was acknowledged when asked, or answered the acknowledge 400 invalidPurchaseState),
-- `not_owned` (400 productNotOwnedByUser: refunded or voided first), `not_found` (404),
-- `gone` (410), `rejected` (another refusal, its reason in `detail`). A purchase Google could not
-- answer for (5xx, timeouts) has no row: the next run asks again.
CREATE TABLE reconcile.play_acknowledgements (
    purchase_token text PRIMARY KEY,
    -- The order the job judged delivered (the first order of the token's unacknowledged rows).
    order_id text NOT NULL,
    package_name text NOT NULL,
    product_id text NOT NULL,
    -- `product` (purchases.products.acknowledge) or `subscription` (purchases.subscriptions.acknowledge).
    product_kind text NOT NULL CHECK (product_kind IN ('product', 'subscription')),
    outcome text NOT NULL CHECK (outcome IN ('acknowledged', 'already_acknowledged', 'not_owned', 'not_found',
                                             'gone', 'rejected')),
    detail text,
    run_id bigint REFERENCES reconcile.runs (id),
    acknowledged_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX play_acknowledgements_run_idx ON reconcile.play_acknowledgements (run_id);

-- The rescue's candidates: Play rows still unacknowledged, read by token in batches.
CREATE INDEX apple_transactions_play_unacknowledged_idx ON reconcile.apple_transactions (purchase_token)
    WHERE store = 'google_play' AND acknowledged IS NOT TRUE;
