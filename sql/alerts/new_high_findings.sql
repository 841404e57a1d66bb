-- The findings of high severity run :'run_id' opened: its new items of the high kinds.
-- Reads:  reconcile.review_items
-- Writes: nothing
-- Values: :'run_id' (bigint); :'kinds' (text[]): the kinds whose severity is high (FindingKind).
-- Returns: count (integer).
SELECT count(*)::integer FROM reconcile.review_items
 WHERE first_seen_run = :'run_id'::bigint AND kind = ANY(:'kinds'::text[]);
