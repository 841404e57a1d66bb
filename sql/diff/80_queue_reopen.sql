-- Stage: queue, step 1 — auto-resolved items whose condition came back are open again (SPEC
-- section 6). Items a person resolved or dismissed keep their status.
-- Reads:  diff_findings
-- Writes: reconcile.review_items (status, updated_at, last_seen_run), reconcile.review_events
-- Values: :'run_id' (bigint), :'actor' (text: who opened the items, the job's name 'reconcile'
--         or the person whose desk lookup enqueued them).
WITH reopened AS (
    UPDATE reconcile.review_items r SET status = 'open', updated_at = now(), last_seen_run = :'run_id'::bigint
      FROM diff_findings f
     WHERE f.fingerprint = r.fingerprint AND r.status = 'auto_resolved'
    RETURNING r.id
)
INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
SELECT id, :'run_id'::bigint, :'actor', 'auto_resolved', 'open', 'detected again' FROM reopened;
