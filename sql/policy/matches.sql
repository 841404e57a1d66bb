-- The items a policy rule's conditions take (SPEC section 17), oldest first: items in `open`
-- status that nobody ever claimed (an item a person took, or one an approver sent back, is left
-- to people), of the rule's kinds, and for each condition the rule gives, meeting it. Which rule
-- decides an item (the first in the file that takes it) is the caller's.
-- Reads:  reconcile.review_items, reconcile.review_events, reconcile.apple_transactions,
--         reconcile.transaction_sources
-- Writes: nothing.
-- Values: :'item_id' (bigint: only this item, to check it again in its decision's transaction;
--         null: every open item), :'item_ids' (bigint[]: only these items, the ones a receiver
--         pass's judgement opened or changed; null: every open item), :'kinds' (text[]), :'products' (text[], or null: any product),
--         :'max_currencies' (text[]) and :'max_amounts_milli' (bigint[]: the cap of the currency at
--         the same place; both null: any value), :'environment' (text: Apple's spelling,
--         Production or Sandbox; null: any), :'sources' (text[]: at least one of them confirmed the
--         transaction; null: any), :'buyer_bases' (text[]: how the diff decided the buyer; null:
--         any), :'no_open_kinds' (text[]: the item's account has no other undecided item of these
--         kinds, as its account, its buyer or the account it credited; null: no such condition),
--         :'undecided_statuses' (text[]: the statuses of an item not yet decided), :'stores' (text[]:
--         the item is about one of these stores, app_store or google_play; null: any).
-- Returns: id, user_id, amount_milli, currency.
WITH implicated AS (
    -- The accounts the undecided items of the no_open kinds are about, with the item.
    SELECT o.id, x.account
      FROM reconcile.review_items o
     CROSS JOIN LATERAL (VALUES (o.user_id), (o.grant_to_user_id), (o.revoke_from_user_id)) AS x (account)
     WHERE :'no_open_kinds'::text[] IS NOT NULL
       AND o.kind = ANY (:'no_open_kinds'::text[])
       AND o.status = ANY (:'undecided_statuses'::text[])
       AND x.account IS NOT NULL
)
SELECT r.id, r.user_id, r.amount_milli, r.currency
  FROM reconcile.review_items r
 WHERE r.status = 'open' AND r.assignee IS NULL
   -- A reject sends an item back open and unclaimed: its history, not its row, says a person took it.
   AND NOT EXISTS (SELECT 1 FROM reconcile.review_events e
                    WHERE e.review_item_id = r.id
                      AND (e.to_status = 'in_review' OR e.from_status = 'awaiting_approval'))
   AND (:'item_id'::bigint IS NULL OR r.id = :'item_id'::bigint)
   AND (:'item_ids'::bigint[] IS NULL OR r.id = ANY (:'item_ids'::bigint[]))
   AND r.kind = ANY (:'kinds'::text[])
   AND (:'products'::text[] IS NULL OR r.product_id = ANY (:'products'::text[]))
   -- An item in a currency the cap does not name, or of unknown value, is not "at most" anything.
   AND (:'max_currencies'::text[] IS NULL OR EXISTS (
           SELECT 1 FROM unnest(:'max_currencies'::text[], :'max_amounts_milli'::bigint[]) AS m (currency, amount_milli)
            WHERE m.currency = r.currency AND r.amount_milli <= m.amount_milli))
   AND (:'environment'::text IS NULL OR EXISTS (
           SELECT 1 FROM reconcile.apple_transactions a
            WHERE a.transaction_id = r.transaction_id AND a.environment = :'environment'::text))
   AND (:'sources'::text[] IS NULL OR EXISTS (
           SELECT 1 FROM reconcile.transaction_sources s
            WHERE s.transaction_id = r.transaction_id AND s.source = ANY (:'sources'::text[])))
   AND (:'stores'::text[] IS NULL OR r.store = ANY (:'stores'::text[]))
   AND (:'buyer_bases'::text[] IS NULL OR r.evidence->'buyer'->>'basis' = ANY (:'buyer_bases'::text[]))
   -- An item whose account is unknown cannot be said to have no other open item.
   AND (:'no_open_kinds'::text[] IS NULL
        OR (r.user_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM implicated i WHERE i.account = r.user_id AND i.id <> r.id)))
 ORDER BY r.id;
