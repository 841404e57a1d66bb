-- What a policy rule has decided so far within its limits' spans (SPEC section 17), from its
-- events: the items about one account it decided in the last 24 hours, and the items it decided
-- within the run's budget; their amounts in one currency. Read under lock_rule.sql when deciding;
-- without it for a preview.
--
-- A per_run limit is the budget of a nightly run: what that run decided, and what the receiver's
-- passes after it decided until the next nightly run started, count against it together. So a
-- nightly run counts its own events, and a receiver pass (a run of kind 'receiver') those of the
-- last nightly run that could decide (not a dry run) before it and of every pass since: passes
-- every few seconds never start from zero, and the next nightly run does.
-- Reads:  reconcile.review_events, reconcile.review_items, reconcile.runs
-- Writes: nothing.
-- Values: :'actor' (text: policy:<name>), :'user_id' (text: the account, or null), :'run_id'
--         (bigint, or null: no run), :'currency' (text: the item's, or null).
-- Returns: account_items, account_amount_milli, run_items, run_amount_milli.
WITH anchor AS (
    -- For a receiver pass, the nightly run whose budget it spends (0: none yet).
    SELECT coalesce(max(n.id), 0) AS id FROM reconcile.runs n
     WHERE n.kind = 'run' AND NOT n.dry_run AND n.id < :'run_id'::bigint
       AND EXISTS (SELECT 1 FROM reconcile.runs p WHERE p.id = :'run_id'::bigint AND p.kind = 'receiver')
), budget AS (
    SELECT :'run_id'::bigint AS id WHERE :'run_id'::bigint IS NOT NULL
    UNION
    SELECT b.id FROM reconcile.runs b, anchor a
     WHERE EXISTS (SELECT 1 FROM reconcile.runs p WHERE p.id = :'run_id'::bigint AND p.kind = 'receiver')
       AND b.id < :'run_id'::bigint AND b.id >= a.id AND (b.id = a.id OR b.kind = 'receiver')
), account AS (
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
                     WHERE e.actor = :'actor'::text AND e.actor LIKE 'policy:%'
                       AND e.run_id IN (SELECT id FROM budget))
)
SELECT (SELECT count(*) FROM account)::integer AS account_items,
       (SELECT coalesce(sum(amount_milli) FILTER (WHERE currency = :'currency'::text), 0) FROM account)::bigint
           AS account_amount_milli,
       (SELECT count(*) FROM run)::integer AS run_items,
       (SELECT coalesce(sum(amount_milli) FILTER (WHERE currency = :'currency'::text), 0) FROM run)::bigint
           AS run_amount_milli;
