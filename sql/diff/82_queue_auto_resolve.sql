-- Stage: queue, step 3 — open items this diff judged and no longer detects are auto-resolved.
-- Items whose transaction, or the account their rule waits on (held_by_user_id), still waits on
-- a verification were not judged and stay as they are. Items about an upload are judged over the
-- uploads in scope, whatever the transactions. An item whose decision awaits a second person's
-- approval is undecided too: the condition gone (the app delivered meanwhile), its pending
-- decision is dropped with it, so that approving it later cannot grant twice; the event keeps
-- what was pending.
-- Reads:  diff_findings, diff_scope, diff_blocked, diff_pending_users
-- Writes: reconcile.review_items (status, pending_*, updated_at), reconcile.review_events
-- Values: :'run_id' (bigint), :'upload_kinds' (text[]: the kinds about an upload,
--         FindingKind.isAboutAnUpload).
WITH gone AS (
    SELECT r.id, r.status AS old_status
      FROM reconcile.review_items r
     WHERE r.status IN ('open', 'in_review', 'awaiting_approval')
       AND NOT EXISTS (SELECT 1 FROM diff_findings f WHERE f.fingerprint = r.fingerprint)
       AND (r.kind = ANY (:'upload_kinds'::text[])
            OR (r.transaction_id IN (SELECT transaction_id FROM diff_scope)
                AND r.transaction_id NOT IN (SELECT transaction_id FROM diff_blocked)
                AND NOT EXISTS (SELECT 1 FROM diff_pending_users p WHERE p.user_id = r.held_by_user_id)))
     FOR UPDATE
), resolved AS (
    UPDATE reconcile.review_items r
       SET status = 'auto_resolved', pending_resolution = NULL, pending_by = NULL, pending_at = NULL,
           pending_note = NULL, updated_at = now()
      FROM gone WHERE gone.id = r.id
    RETURNING r.id, gone.old_status
)
INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
SELECT id, :'run_id'::bigint, 'reconcile', old_status, 'auto_resolved', 'condition no longer detected'
  FROM resolved;
