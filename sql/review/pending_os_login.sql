-- The operating-system login that made the decision waiting on an item (null: it was made on the
-- pages or by a policy), read by an approval from the command line (issue 36 item 4).
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: :'id' (bigint).
SELECT pending_os_login FROM reconcile.review_items WHERE id = :'id'::bigint;
