-- Issue 38 (SPEC section 18): a second store. Every row the job keeps about a transaction, a
-- finding, a review item or an action says which store it is about: `app_store` (every row
-- before this migration) or `google_play`.
--
-- reconcile.apple_transactions keeps its name (SPEC section 2 fixes it) and holds every store's
-- confirmed transactions: one white table, so that the scopes, the claims and their triggers
-- (migration 0011), the diff's rules, the desk and the policies read one relation whatever the
-- store. Apple's transaction ids are digits; Play's are order ids (`GPA.…`) or, for a purchase
-- Google gave no order id (licence testers), the purchase token: they never meet.
ALTER TABLE reconcile.apple_transactions
    ADD COLUMN store text NOT NULL DEFAULT 'app_store' CHECK (store IN ('app_store', 'google_play')),
    -- Play: the purchase's own signed account binding (BillingFlowParams.setObfuscatedAccountId,
    -- returned by the API as obfuscatedExternalAccountId), resolved as an applicationUsername is.
    ADD COLUMN obfuscated_account_id text,
    -- Play: the purchase token the order belongs to (renewals share it).
    ADD COLUMN purchase_token text,
    -- Play: how many units a partial refund took back (quantity − refundableQuantity, or the
    -- voided quantities summed); null when the whole purchase is voided or nothing is.
    ADD COLUMN refunded_quantity integer CHECK (refunded_quantity IS NULL OR refunded_quantity >= 0),
    -- Play: Google's acknowledgement (null when the source does not say; Apple has none).
    ADD COLUMN acknowledged boolean,
    -- Play: a pending purchase (cash, bank transfer) is not paid yet: never judged until it is.
    ADD COLUMN pending boolean NOT NULL DEFAULT false;
CREATE INDEX apple_transactions_purchase_token_idx ON reconcile.apple_transactions (purchase_token)
    WHERE purchase_token IS NOT NULL;

-- Which store verified an upload (its kind's: reconcile.upload_store), so that an upload's bundle
-- or package is judged against that store's accepted apps (reconcile.app_accepted).
ALTER TABLE reconcile.upload_verifications
    ADD COLUMN store text NOT NULL DEFAULT 'app_store' CHECK (store IN ('app_store', 'google_play'));

ALTER TABLE reconcile.review_items
    ADD COLUMN store text NOT NULL DEFAULT 'app_store' CHECK (store IN ('app_store', 'google_play'));
ALTER TABLE reconcile.action_outbox
    ADD COLUMN store text NOT NULL DEFAULT 'app_store' CHECK (store IN ('app_store', 'google_play'));

-- The reference ledger gains the optional `store` column of SPEC section 18. An operator's own
-- relation may lack it: an id starting `GPA.` is then Play's and every other Apple's
-- (reconcile.ledger_store below, the one place that rule is written in SQL).
ALTER TABLE reconcile.deliveries
    ADD COLUMN store text CHECK (store IS NULL OR store IN ('app_store', 'google_play'));

-- The store of a ledger row: its `store` column when set, else by its transaction id's form.
CREATE FUNCTION reconcile.ledger_store(store text, transaction_id text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(store, CASE WHEN transaction_id LIKE 'GPA.%' THEN 'google_play' ELSE 'app_store' END)
$$;

-- The store of an upload, by its kind (Store.init(uploadKind:) in Swift says the same; a test
-- holds the two equal).
CREATE FUNCTION reconcile.upload_store(kind text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN kind = 'play_purchase' THEN 'google_play' ELSE 'app_store' END
$$;

-- Whether an app is one the job reconciles: `accepted` lists each store's apps as `store/app`
-- (`app_store/<bundle id>` from RECONCILE_BUNDLE_IDS, `google_play/<package>` from
-- GOOGLE_PLAY_PACKAGE_NAMES; Differ.Parameters builds it), so that a third store adds its apps to
-- the list and nothing here. An inlined expression: the passes over the whole history call it per row.
CREATE FUNCTION reconcile.app_accepted(store text, bundle_id text, accepted text[])
    RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT store || '/' || bundle_id = ANY (accepted)
$$;
