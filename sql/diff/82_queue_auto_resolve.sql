-- Stage: queue, step 3 — open items this diff judged and no longer detects are auto-resolved.
-- Items whose transaction, or the account their rule waits on (held_by_user_id), still waits on
-- a verification were not judged and stay as they are. Items about an upload are judged over the
-- uploads in scope, whatever the transactions. An item whose decision awaits a second person's
-- approval is undecided too: the condition gone (the app delivered meanwhile), its pending
-- decision is dropped with it, so that approving it later cannot grant twice; the event keeps
-- what was pending.
--
-- The receiver's scoped judgement (Differ.upsertQueue's `.only`) names the transactions it judged:
-- only their items are auto-resolved, and none about an upload. The scope adds their families,
-- and the uploads that carried them, to judge them right, not to judge those for themselves:
-- their items wait for the nightly run. So a reversed refund leaves no revocation to decide.
-- Reads:  diff_findings, diff_scope, diff_blocked, diff_pending_users
-- Writes: reconcile.review_items (status, pending_*, updated_at), reconcile.review_events
-- Values: :'run_id' (bigint), :'actor' (text: the events' actor, reconcile or receiver),
--         :'upload_kinds' (text[]: the kinds about an upload, FindingKind.isAboutAnUpload),
--         :'only_transaction_ids' (text[]; null: every transaction in scope).
WITH gone AS (
    SELECT r.id, r.status AS old_status
      FROM reconcile.review_items r
     WHERE r.status IN ('open', 'in_review', 'awaiting_approval')
       AND NOT EXISTS (SELECT 1 FROM diff_findings f WHERE f.fingerprint = r.fingerprint)
       AND CASE WHEN r.kind = ANY (:'upload_kinds'::text[]) THEN :'only_transaction_ids'::text[] IS NULL
                ELSE CASE WHEN :'only_transaction_ids'::text[] IS NULL
                          THEN r.transaction_id IN (SELECT transaction_id FROM diff_scope)
                          ELSE r.transaction_id = ANY (:'only_transaction_ids'::text[])
                     END
                     AND r.transaction_id NOT IN (SELECT transaction_id FROM diff_blocked)
                     AND NOT EXISTS (SELECT 1 FROM diff_pending_users p WHERE p.user_id = r.held_by_user_id)
           END
     FOR UPDATE
), resolved AS (
    UPDATE reconcile.review_items r
       SET status = 'auto_resolved', pending_resolution = NULL, pending_by = NULL, pending_at = NULL,
           pending_note = NULL, pending_action = NULL, updated_at = now()
      FROM gone WHERE gone.id = r.id
    RETURNING r.id, gone.old_status
)
INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
SELECT id, :'run_id'::bigint, :'actor'::text, old_status, 'auto_resolved', 'condition no longer detected'
  FROM resolved;
