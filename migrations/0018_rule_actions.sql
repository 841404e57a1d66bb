-- What a decision gives and takes back (grant_*, revoke_* of migration 0006) is the diff's to say,
-- as the rest of a finding is: sql/diff/71_actions.sql completes it for every finding from its
-- evidence, a rule that knows more (wrong_account's credited account, refunded_delivery's
-- refunded units) says it in its own file, and sql/diff/81_queue_upsert.sql writes it with the
-- item. The trigger that re-derived it per kind, down to parsing a wrong_account fingerprint, goes.
-- The items already stored keep the values it gave them.
DROP TRIGGER review_items_action ON reconcile.review_items;
DROP FUNCTION reconcile.review_items_action();
