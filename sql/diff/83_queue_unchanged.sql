-- Stage: queue, step 4 — items carried over unchanged (diff_unchanged) were seen by this run:
-- their condition holds, as no input of theirs changed. Their evidence and updated_at stay.
-- Reads:  diff_unchanged
-- Writes: reconcile.review_items (last_seen_run)
-- Values: :'run_id' (bigint).
UPDATE reconcile.review_items r SET last_seen_run = :'run_id'::bigint
  FROM diff_unchanged u
 WHERE u.id = r.id AND r.last_seen_run IS DISTINCT FROM :'run_id'::bigint;
