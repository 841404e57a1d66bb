-- One page of the items matching a filter, most severe first, then oldest first.
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: the filter (ReviewFilter.values: null where it does not filter): :'statuses',
--         :'kinds', :'severities' (text[]), :'user_id', :'product_id', :'transaction_id',
--         :'assignee' (text), :'since', :'until' (timestamptz), :'run_id' (bigint),
--         :'max_amount_currencies' (text[]), :'max_amount_millis' (bigint[]: the same order),
--         :'currency' (text), :'ids' (bigint[]);
--         :'severity_order' (text[]: the severities most urgent first, Severity.known; others
--         after them), :'limit', :'offset' (bigint).
SELECT id, fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
       upload_id, suggested_action, first_seen_run, last_seen_run, created_at, updated_at, assignee, resolution,
       resolved_by, resolved_at, note, amount_milli, currency, pending_resolution, pending_by, pending_at,
       pending_note, approved_by, approved_at
  FROM reconcile.review_items r
 WHERE reconcile.review_item_matches(
           r, :'statuses'::text[], :'kinds'::text[], :'severities'::text[], :'user_id'::text, :'product_id'::text,
           :'transaction_id'::text, :'assignee'::text, :'since'::timestamptz, :'until'::timestamptz,
           :'run_id'::bigint, :'max_amount_currencies'::text[],
           :'max_amount_millis'::bigint[], :'currency'::text, :'ids'::bigint[])
 ORDER BY coalesce(array_position(:'severity_order'::text[], severity), cardinality(:'severity_order'::text[])),
          created_at, id
 LIMIT :'limit'::bigint OFFSET :'offset'::bigint;
