-- The review filter (migration 0015) also selects by the run that detected an item, and by its
-- value: at most an amount (milliunits), in a currency. `review list`, the queue page, the CSV
-- export and the bulk decisions of `review resolve|dismiss` read the one definition.
DROP FUNCTION reconcile.review_item_matches(
    reconcile.review_items, text[], text[], text[], text, text, text, text, timestamptz, timestamptz);
CREATE FUNCTION reconcile.review_item_matches(
    item reconcile.review_items, statuses text[], kinds text[], severities text[], user_id text, product_id text,
    transaction_id text, assignee text, since timestamptz, until timestamptz, run_id bigint,
    max_amount_milli bigint, currency text
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
       -- An item whose value is unknown is not "at most" anything.
       AND (max_amount_milli IS NULL OR item.amount_milli <= max_amount_milli)
       AND (currency IS NULL OR item.currency = currency)
$$;
