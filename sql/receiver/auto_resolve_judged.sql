-- Stage: the receiver's queue step after its scoped judgement (ReceiverWorker.judge, after
-- Differ.upsertQueue): the open items of exactly the transactions it judged whose finding is gone
-- are auto-resolved, as the nightly run's queue does (sql/diff/82_queue_auto_resolve.sql), scoped.
-- Reads:  reconcile.review_items, diff_findings, diff_blocked, diff_pending_users
-- Writes: reconcile.review_items (status, pending_*, updated_at), reconcile.review_events
-- Values: :'run_id' (bigint) — the receiver pass; :'transaction_ids' (text[]) — the transactions
--         it judged (receiver/due_judgements.sql); :'upload_kinds' (text[]: the kinds about an
--         upload, FindingKind.isAboutAnUpload).
--
-- Runs in the judgement's transaction, after the diff over DiffScope.transactions filled
-- diff_findings. Only items whose transaction is one of those given: the family members the scope
-- added are judged too, but are left to the nightly run, as are items about an upload (judged over
-- uploads, not transactions). What holds a finding back holds its item too, as in 82: a
-- transaction an upload still being verified says it reports (diff_blocked), an item whose rule
-- waits on an account with an upload still being verified (held_by_user_id, diff_pending_users).
-- An item awaiting a second person's approval is undecided: its pending decision is dropped with
-- it (the event keeps what was pending), so that approving it later cannot act on a condition gone
-- — a refund reversed, say, whose revocation would take the goods of a customer who paid.
WITH gone AS (
    SELECT r.id, r.status AS old_status
      FROM reconcile.review_items r
     WHERE r.transaction_id = ANY (:'transaction_ids'::text[])
       AND r.status IN ('open', 'in_review', 'awaiting_approval')
       AND r.kind <> ALL (:'upload_kinds'::text[])
       AND NOT EXISTS (SELECT 1 FROM diff_findings f WHERE f.fingerprint = r.fingerprint)
       AND NOT EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = r.transaction_id)
       AND NOT EXISTS (SELECT 1 FROM diff_pending_users p WHERE p.user_id = r.held_by_user_id)
     FOR UPDATE OF r
), resolved AS (
    UPDATE reconcile.review_items r
       SET status = 'auto_resolved', pending_resolution = NULL, pending_by = NULL, pending_at = NULL,
           pending_note = NULL, updated_at = now()
      FROM gone WHERE gone.id = r.id
    RETURNING r.id, gone.old_status
)
INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
SELECT id, :'run_id'::bigint, 'receiver', old_status, 'auto_resolved', 'condition no longer detected'
  FROM resolved;
