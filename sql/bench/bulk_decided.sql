-- How many of reconcile-bench bulk's items are resolved with their grant queued (it checks all).
-- Reads:  reconcile.review_items, reconcile.action_outbox
-- Writes: nothing.
-- Values: :'ids' (bigint[]).
SELECT count(*)::integer
  FROM reconcile.review_items i JOIN reconcile.action_outbox o ON o.review_item_id = i.id
 WHERE i.id = ANY (:'ids'::bigint[]) AND i.status = 'resolved' AND o.action = 'grant';
