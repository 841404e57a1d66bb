-- What the decision waiting on an item would make the app do, as its decider was shown it
-- (await_approval.sql), as JSON text; null when it was decided before migration 0026 kept it.
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: :'id' (bigint).
SELECT pending_action::text AS pending_action FROM reconcile.review_items WHERE id = :'id'::bigint;
