-- A decision's item takes its finding as judged again at that moment (rejudged.sql said it holds):
-- its evidence, accounts, value and what a decision gives and takes back, as 81_queue_upsert.sql
-- refreshes an undecided item, so that the action drafted next is the one the current truth asks
-- for (the units still missing, the account the purchase is bound to now).
-- Reads:  diff_findings, reconcile.review_items
-- Writes: reconcile.review_items (evidence, user_id, product_id, original_transaction_id, upload_id,
--         amount_milli, currency, held_by_user_id, grant_*, revoke_*, updated_at)
-- Values: :'id' (bigint).
UPDATE reconcile.review_items r
   SET evidence = f.evidence, user_id = f.user_id, product_id = f.product_id,
       original_transaction_id = f.original_transaction_id, upload_id = f.upload_id,
       amount_milli = f.amount_milli, currency = f.currency, held_by_user_id = f.held_by_user_id,
       grant_to_user_id = f.grant_to_user_id, grant_product_id = f.grant_product_id,
       grant_quantity = f.grant_quantity, revoke_from_user_id = f.revoke_from_user_id,
       revoke_product_id = f.revoke_product_id, revoke_quantity = f.revoke_quantity, updated_at = now()
  FROM diff_findings f
 WHERE r.id = :'id'::bigint AND f.fingerprint = r.fingerprint
RETURNING r.*;
