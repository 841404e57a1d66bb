-- Issue 38 item 6 (SPEC section 18): the review filter also selects by store (`--store
-- app_store|google_play`, the queue page's store field). Issue 37 item 6: the statements of
-- sql/review/ that list, count, export and bulk-decide items stop repeating the filter's fifteen
-- arguments and the listed columns.
--
-- The filter is one value of one composite type, bound once (ReviewFilter.values, the one place it
-- is bound): `reconcile.review_item_matches(r, :'filter'::reconcile.review_filter)`. The function
-- is an inlined SQL expression (one without a sub-select: see max_amount below), and the bound
-- filter a constant of the statement's plan, so the planner folds each field the filter leaves
-- null (`NULL IS NULL OR …`) and each field it sets to the plain condition on the column: the
-- queue page's statements are driven by the items' indexes (ReviewStoreTests reads their plans).
-- Migration 0027's function was not inlined (its sub-select), so every queue statement since had
-- been a sequential scan calling it per row.
DROP FUNCTION reconcile.review_item_matches(
    reconcile.review_items, text[], text[], text[], text, text, text, text, timestamptz, timestamptz, bigint,
    text[], bigint[], text, bigint[]);

CREATE TYPE reconcile.review_filter AS (
    statuses text[],
    kinds text[],
    severities text[],
    user_id text,
    product_id text,
    -- As transaction_id or original_transaction_id.
    transaction_id text,
    assignee text,
    since timestamptz,
    until timestamptz,
    run_id bigint,
    -- At most this much per currency (the same order): an item of another currency, or of
    -- unknown value, is not "at most" anything.
    max_amount_currencies text[],
    max_amount_millis bigint[],
    currency text,
    ids bigint[],
    -- `app_store` or `google_play` (SPEC section 18).
    store text
);

-- The columns a list of items shows (ReviewItem: everything but the evidence, read by the item's
-- own page only): `review list`, the queue page and the CSV export read these. A plain view,
-- merged into each statement that reads it.
CREATE VIEW reconcile.review_item_list AS
SELECT id, fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
       upload_id, suggested_action, first_seen_run, last_seen_run, created_at, updated_at, assignee, resolution,
       resolved_by, resolved_at, note, amount_milli, currency, pending_resolution, pending_by, pending_at,
       pending_note, approved_by, approved_at, store
  FROM reconcile.review_items;

CREATE FUNCTION reconcile.review_item_matches(item reconcile.review_item_list, f reconcile.review_filter)
    RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (f.statuses IS NULL OR item.status = ANY (f.statuses))
       AND (f.kinds IS NULL OR item.kind = ANY (f.kinds))
       AND (f.severities IS NULL OR item.severity = ANY (f.severities))
       AND (f.user_id IS NULL OR item.user_id = f.user_id)
       AND (f.product_id IS NULL OR item.product_id = f.product_id)
       AND (f.transaction_id IS NULL OR item.transaction_id = f.transaction_id
            OR item.original_transaction_id = f.transaction_id)
       AND (f.assignee IS NULL OR item.assignee = f.assignee)
       AND (f.since IS NULL OR item.created_at >= f.since)
       AND (f.until IS NULL OR item.created_at < f.until)
       AND (f.run_id IS NULL OR item.first_seen_run = f.run_id)
       -- The bound of the item's currency, found by its place in the list; an item in a currency
       -- not named, or of unknown value, is not "at most" anything. No sub-select: PostgreSQL
       -- inlines no function whose body holds one, and migration 0027's EXISTS over unnest() had
       -- left every queue statement calling the function on each row of a sequential scan.
       AND (f.max_amount_currencies IS NULL
            OR coalesce(item.amount_milli <= f.max_amount_millis[array_position(f.max_amount_currencies, item.currency)],
                        false))
       AND (f.currency IS NULL OR item.currency = f.currency)
       AND (f.ids IS NULL OR item.id = ANY (f.ids))
       AND (f.store IS NULL OR item.store = f.store)
$$;

-- Whether a person may decide an item now (bulk_candidates.sql, bulk_summary.sql): open, or in
-- review and claimed by them. An item another person claimed, or one decided already, is never
-- taken by a bulk decision.
CREATE FUNCTION reconcile.review_item_decidable_by(item reconcile.review_item_list, actor text)
    RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT item.status = 'open' OR (item.status = 'in_review' AND item.assignee = actor)
$$;
