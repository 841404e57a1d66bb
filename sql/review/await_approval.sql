-- A decision above RECONCILE_APPROVAL_ABOVE waits for a second person (SPEC section 17): the item
-- keeps the decision as pending, with what it would make the app do as its decider was shown it
-- (the action, product, units and accounts: approve takes effect exactly so, or not at all), and
-- whoever decides an unclaimed item becomes its assignee. Nothing reaches the outbox until
-- approve.sql. pending_os_login is the command line's login (null from the pages or a policy):
-- read only while the item waits, and set by every decision that waits.
-- Reads:  reconcile.review_items
-- Writes: reconcile.review_items (status, pending_resolution, pending_by, pending_at, pending_note,
--         pending_action, pending_os_login, assignee, updated_at)
-- Values: :'id' (bigint), :'resolution' (text), :'person' (text), :'note' (text, or null),
--         :'action' (jsonb, or null: the action drafted, ReviewService.ActionDraft), :'os_login'
--         (text, or null).
UPDATE reconcile.review_items
   SET status = 'awaiting_approval', pending_resolution = :'resolution'::text, pending_by = :'person'::text,
       pending_at = now(), pending_note = :'note'::text, pending_action = :'action'::jsonb,
       assignee = coalesce(assignee, :'person'::text), pending_os_login = :'os_login'::text, updated_at = now()
 WHERE id = :'id'::bigint
RETURNING *;
