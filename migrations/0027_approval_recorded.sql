-- Issue 36 item 4 (SPEC section 17): the approval threshold in force is recorded in the database
-- by every process configured with RECONCILE_APPROVAL_ABOVE, and every decision applies the
-- stricter of its own setting and the recorded one, so a shell, a `serve` or a receiver without
-- the setting cannot skip approval. One row per currency; a process records its limit of a
-- currency when it is stricter (lower) than the row's, or the row is missing. Only an operator
-- raises or removes a limit (`reconcile review approval-threshold --set|--clear`, or SQL:
-- docs/operations.md).
CREATE TABLE reconcile.approval_thresholds (
    currency text PRIMARY KEY CHECK (currency ~ '^[A-Z]{3,8}$'),
    -- A decision on an item of this currency worth more than this (milliunits) waits.
    above_milli bigint NOT NULL CHECK (above_milli >= 0),
    recorded_at timestamptz NOT NULL DEFAULT now(),
    -- Which process recorded it (the command, host, process id and operating-system login).
    recorded_by text NOT NULL
);

-- On the command line `--by` is only a claim: a decision made there records the operating-system
-- login of whoever ran it beside it, on its event and, while it waits for approval, on the item,
-- so that an approval from the same login is refused like one's own. Null for the pages (their
-- session proves the name) and the job.
ALTER TABLE reconcile.review_events ADD COLUMN os_login text;
ALTER TABLE reconcile.review_items ADD COLUMN pending_os_login text;

-- Issue 36 item 8: the review filter's value bound is per currency (`--max-amount CNY=30
-- --max-amount USD=5`, as a policy's `max_amount`): an item matches when its currency is one of
-- those named and its value at most that currency's amount; an item in another currency, or of
-- unknown value, never matches.
DROP FUNCTION reconcile.review_item_matches(
    reconcile.review_items, text[], text[], text[], text, text, text, text, timestamptz, timestamptz, bigint,
    bigint, text, bigint[]);
CREATE FUNCTION reconcile.review_item_matches(
    item reconcile.review_items, statuses text[], kinds text[], severities text[], user_id text, product_id text,
    transaction_id text, assignee text, since timestamptz, until timestamptz, run_id bigint,
    max_amount_currencies text[], max_amount_millis bigint[], currency text, ids bigint[]
) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (statuses IS NULL OR item.status = ANY (statuses))
       AND (kinds IS NULL OR item.kind = ANY (kinds))
       AND (severities IS NULL OR item.severity = ANY (severities))
       AND (user_id IS NULL OR item.user_id = user_id)
       AND (product_id IS NULL OR item.product_id = product_id)
       AND (transaction_id IS NULL OR item.transaction_id = transaction_id
            OR item.original_transaction_id = transaction_id)
       AND (assignee IS NULL OR item.assignee = assignee)
       AND (since IS NULL OR item.created_at >= since)
       AND (until IS NULL OR item.created_at < until)
       AND (run_id IS NULL OR item.first_seen_run = run_id)
       -- An item whose value is unknown is not "at most" anything; one in a currency not named
       -- is not either.
       AND (max_amount_currencies IS NULL
            OR EXISTS (SELECT 1 FROM unnest(max_amount_currencies, max_amount_millis) AS m(currency, milli)
                        WHERE m.currency = item.currency AND item.amount_milli <= m.milli))
       AND (currency IS NULL OR item.currency = currency)
       AND (ids IS NULL OR item.id = ANY (ids))
$$;
