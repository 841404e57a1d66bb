-- Stage: the review items of the findings a receiver pass's judgement made (diff_findings), with
-- their status and a digest of what the queue shows and a decision acts on. Read in the
-- judgement's transaction before and after its queue upsert: the items the upsert opened (created,
-- or reopened from auto_resolved) or changed are the pass's own, the only ones its policies decide
-- (SPEC section 17; docs/operations.md, "What a receiver pass decides").
-- Reads:  diff_findings, reconcile.review_items
-- Writes: nothing
-- Values: none.
-- Returns: id, status, digest (text).
SELECT r.id, r.status,
       md5(ROW(r.kind, r.severity, r.suggested_action, r.user_id, r.product_id, r.original_transaction_id,
               r.upload_id, r.evidence, r.amount_milli, r.currency, r.held_by_user_id, r.grant_to_user_id,
               r.grant_product_id, r.grant_quantity, r.revoke_from_user_id, r.revoke_product_id,
               r.revoke_quantity)::text) AS digest
  FROM diff_findings f
  -- One item per fingerprint: the fingerprint's index, as the upsert finds it.
  JOIN LATERAL (SELECT * FROM reconcile.review_items r WHERE r.fingerprint = f.fingerprint LIMIT 1) r ON true;
