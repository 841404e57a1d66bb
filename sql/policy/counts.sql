-- What a policy rule has decided so far within its limits' spans (SPEC section 17), from its
-- events: the items about one account it decided in the last 24 hours, and the items it decided in
-- one run; their amounts in one currency. Read under lock_rule.sql when deciding; without it for a
-- preview.
-- Reads:  reconcile.review_events, reconcile.review_items
-- Writes: nothing.
-- Values: :'actor' (text: policy:<name>), :'user_id' (text: the account, or null), :'run_id'
--         (bigint, or null: no run), :'currency' (text: the item's, or null).
-- Returns: account_items, account_amount_milli, run_items, run_amount_milli.
WITH account AS (
    SELECT i.amount_milli, i.currency
      FROM reconcile.review_items i
     WHERE i.user_id = :'user_id'::text
       AND EXISTS (SELECT 1 FROM reconcile.review_events e
                    WHERE e.review_item_id = i.id AND e.actor = :'actor'::text AND e.actor LIKE 'policy:%'
                      AND e.created_at > now() - interval '1 day')
), run AS (
    SELECT i.amount_milli, i.currency
      FROM reconcile.review_items i
     WHERE i.id IN (SELECT e.review_item_id FROM reconcile.review_events e
                     WHERE e.actor = :'actor'::text AND e.actor LIKE 'policy:%' AND e.run_id = :'run_id'::bigint)
)
SELECT (SELECT count(*) FROM account)::integer AS account_items,
       (SELECT coalesce(sum(amount_milli) FILTER (WHERE currency = :'currency'::text), 0) FROM account)::bigint
           AS account_amount_milli,
       (SELECT count(*) FROM run)::integer AS run_items,
       (SELECT coalesce(sum(amount_milli) FILTER (WHERE currency = :'currency'::text), 0) FROM run)::bigint
           AS run_amount_milli;
