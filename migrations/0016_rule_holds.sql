-- What holds an item back is its rule's to say (sql/diff/50_findings_table.sql,
-- diff_findings.held_by_user_id): the account whose pending verification keeps the item from
-- being auto-resolved or carried over unjudged. The queue keeps it with the item, so that the
-- shared stages (75_unchanged.sql, 82_queue_auto_resolve.sql) read one column instead of naming
-- kinds. Items written before this migration get what the stages held them by until now: an
-- unverified_delivery its delivery's account, a wrong_account the account it credited.
ALTER TABLE reconcile.review_items ADD COLUMN held_by_user_id text;

UPDATE reconcile.review_items
   SET held_by_user_id = CASE kind WHEN 'unverified_delivery' THEN user_id
                                   WHEN 'wrong_account' THEN revoke_from_user_id END
 WHERE kind IN ('unverified_delivery', 'wrong_account');

-- The kinds are FindingKind's, and the diff writes no other (sql/diff/50_findings_table.sql):
-- adding a kind no longer needs a migration to widen this check, only that it reads as a kind.
ALTER TABLE reconcile.review_items DROP CONSTRAINT review_items_kind_check;
ALTER TABLE reconcile.review_items ADD CONSTRAINT review_items_kind_check CHECK (kind ~ '^[a-z][a-z_]*$');
