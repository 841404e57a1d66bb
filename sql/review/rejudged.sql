-- Whether an item's finding still holds at the moment of a decision that makes the app act (SPEC
-- section 6), read right after Differ.computeFindings judged the item's transaction again with the
-- nightly rules, in the decision's transaction: `holds` when the finding of the item's fingerprint
-- is found again; `held` when an upload still being verified holds the judgement back (its
-- transaction, or the account its rule waits on: 82_queue_auto_resolve.sql's rule), so that
-- nothing can be said; what the transaction's findings are now, and what the ledger holds now,
-- to tell the person what changed.
-- Reads:  reconcile.review_items, diff_findings, diff_blocked, diff_pending_users, :deliveries
-- Writes: nothing.
-- Values: :'id' (bigint: the item).
SELECT EXISTS (SELECT 1 FROM diff_findings f WHERE f.fingerprint = r.fingerprint) AS holds,
       EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = r.transaction_id)
           OR EXISTS (SELECT 1 FROM diff_pending_users p WHERE p.user_id = r.held_by_user_id) AS held,
       (SELECT string_agg(DISTINCT f.kind, ', ' ORDER BY f.kind)
          FROM diff_findings f WHERE f.transaction_id = r.transaction_id) AS kinds_now,
       (SELECT string_agg(format('%s ×%s to %s', d.product_id, d.quantity, d.user_id), '; ' ORDER BY d.id)
          FROM :deliveries d WHERE d.transaction_id = r.transaction_id AND d.revoked_at IS NULL)
           AS ledger_unrevoked,
       (SELECT count(*) FROM :deliveries d
         WHERE d.transaction_id = r.transaction_id AND d.revoked_at IS NOT NULL) AS ledger_revoked
  FROM reconcile.review_items r
 WHERE r.id = :'id'::bigint;
