-- The review queue's filter (ReviewFilter: `review list`, the queue page, the CSV export) gets one
-- definition, so that the statements of sql/review/ that list, count and export items all read
-- it. An inlined SQL function: with the values bound, the planner folds each unused condition
-- (`NULL IS NULL OR …`) away and sees the same predicate the Swift-built WHERE clause gave it.
CREATE FUNCTION reconcile.review_item_matches(
    item reconcile.review_items, statuses text[], kinds text[], severities text[], user_id text, product_id text,
    transaction_id text, assignee text, since timestamptz, until timestamptz
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
$$;
