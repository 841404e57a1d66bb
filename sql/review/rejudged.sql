-- Whether an item's finding still holds at the moment of a decision that makes the app act (SPEC
-- section 6), read right after Differ.computeFindings judged the item's transaction again with the
-- nightly rules, in the decision's transaction: `holds` when the finding of the item's fingerprint
-- is found again, and then the item takes that finding as judged now (its evidence, accounts,
-- value and what a decision gives and takes back, as 81_queue_upsert.sql refreshes an undecided
-- item), so that the action drafted next is the one the current truth asks for; `held` when an
-- upload still being verified holds the judgement back (its transaction, or the account its rule
-- waits on: 82_queue_auto_resolve.sql's rule), so that nothing can be said; what the
-- transaction's findings are now, and what the ledger holds now, to tell the person what changed.
-- One statement: a bulk decision reads it for each of its items.
-- Reads:  reconcile.review_items, diff_findings, diff_blocked, diff_pending_users, :deliveries
-- Writes: reconcile.review_items (evidence, user_id, product_id, original_transaction_id, upload_id,
--         amount_milli, currency, held_by_user_id, grant_*, revoke_*, updated_at), when it holds
-- Values: :'id' (bigint: the item).
-- Returns: holds, held, kinds_now, ledger_unrevoked, ledger_revoked, and the item's columns (as
--          refreshed when it holds).
WITH refreshed AS (
    UPDATE reconcile.review_items r
       SET evidence = f.evidence, user_id = f.user_id, product_id = f.product_id,
           original_transaction_id = f.original_transaction_id, upload_id = f.upload_id,
           amount_milli = f.amount_milli, currency = f.currency, held_by_user_id = f.held_by_user_id,
           grant_to_user_id = f.grant_to_user_id, grant_product_id = f.grant_product_id,
           grant_quantity = f.grant_quantity, revoke_from_user_id = f.revoke_from_user_id,
           revoke_product_id = f.revoke_product_id, revoke_quantity = f.revoke_quantity, updated_at = now()
      FROM diff_findings f
     WHERE r.id = :'id'::bigint AND f.fingerprint = r.fingerprint
    RETURNING r.*
)
SELECT EXISTS (SELECT 1 FROM refreshed) AS holds,
       EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = r.transaction_id)
           OR EXISTS (SELECT 1 FROM diff_pending_users p WHERE p.user_id = r.held_by_user_id) AS held,
       (SELECT string_agg(DISTINCT f.kind, ', ' ORDER BY f.kind)
          FROM diff_findings f WHERE f.transaction_id = r.transaction_id) AS kinds_now,
       (SELECT string_agg(format('%s ×%s to %s', d.product_id, d.quantity, d.user_id), '; ' ORDER BY d.id)
          FROM :deliveries d WHERE d.transaction_id = r.transaction_id AND d.revoked_at IS NULL)
           AS ledger_unrevoked,
       (SELECT count(*) FROM :deliveries d
         WHERE d.transaction_id = r.transaction_id AND d.revoked_at IS NOT NULL) AS ledger_revoked,
       r.*
  FROM (SELECT * FROM refreshed UNION ALL
        SELECT * FROM reconcile.review_items WHERE id = :'id'::bigint AND NOT EXISTS (SELECT 1 FROM refreshed)) r;
