-- A second person above a value (SPEC section 17, issue 27 item 3): with RECONCILE_APPROVAL_ABOVE
-- set, a decision on an item worth more than it waits in status 'awaiting_approval' until another
-- person approves it (it then takes effect and writes its outbox row) or rejects it (back to
-- 'open'). The pending decision is kept on the item, so approving applies exactly that decision
-- whichever process or page approves it, and the row lock every transition takes covers it.
ALTER TABLE reconcile.review_items DROP CONSTRAINT review_items_status_check;
ALTER TABLE reconcile.review_items ADD CONSTRAINT review_items_status_check
    CHECK (status IN ('open', 'in_review', 'awaiting_approval', 'resolved', 'dismissed', 'auto_resolved'));

ALTER TABLE reconcile.review_items
    -- The decision waiting for a second person: what, by whom, when, and why.
    ADD COLUMN pending_resolution text CHECK (pending_resolution IN ('granted', 'revoked', 'moved', 'no_action')),
    ADD COLUMN pending_by text,
    ADD COLUMN pending_at timestamptz,
    ADD COLUMN pending_note text,
    -- Who approved the decision the item was resolved with, when it needed approval.
    ADD COLUMN approved_by text,
    ADD COLUMN approved_at timestamptz,
    ADD CONSTRAINT review_items_pending_check
        CHECK ((status = 'awaiting_approval') = (pending_resolution IS NOT NULL AND pending_by IS NOT NULL
                                                 AND pending_at IS NOT NULL));

CREATE INDEX review_items_awaiting_idx ON reconcile.review_items (id) WHERE status = 'awaiting_approval';

-- The review filter (migrations 0015, 0019) also selects by id: the items a person ticked on the
-- queue page, decided together after one confirmation.
DROP FUNCTION reconcile.review_item_matches(
    reconcile.review_items, text[], text[], text[], text, text, text, text, timestamptz, timestamptz, bigint,
    bigint, text);
CREATE FUNCTION reconcile.review_item_matches(
    item reconcile.review_items, statuses text[], kinds text[], severities text[], user_id text, product_id text,
    transaction_id text, assignee text, since timestamptz, until timestamptz, run_id bigint,
    max_amount_milli bigint, currency text, ids bigint[]
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
       AND (ids IS NULL OR item.id = ANY (ids))
$$;
