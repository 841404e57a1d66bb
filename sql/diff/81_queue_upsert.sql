-- Stage: queue, step 2 — one item per fingerprint ever: created when new (with a 'detected'
-- event), refreshed when seen again; the evidence of an item a person decided stays as it was.
-- Who gets the goods and who loses them (grant_*, revoke_* columns) are the finding's
-- (71_actions.sql), refreshed with its evidence. The finding's account, amount and purchase date as
-- detected (detected_user_id, amount_milli, currency, purchase_date) are kept with the evidence:
-- the report lists an item carried over unchanged from them (75_unchanged.sql). An open item's
-- account, product, original transaction and upload follow its finding's (a buyer bound later, a
-- delivery moved, a hand-made grant's product corrected), and its severity and suggested action
-- its kind's (a release that changes them): the queue shows what the finding is about now, as the
-- report and a run over the whole history do; a decided item keeps what it was decided for.
-- Reads:  diff_findings, diff_kinds
-- Writes: reconcile.review_items, reconcile.review_events
-- Values: :'run_id' (bigint), :'actor' (text: who opened the items, the job's name 'reconcile'
--         or the person whose desk lookup enqueued them).
-- Returns: created, refreshed.
WITH upserted AS (
    INSERT INTO reconcile.review_items AS r
        (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id,
         product_id, upload_id, suggested_action, evidence, first_seen_run, last_seen_run, detected_user_id,
         amount_milli, currency, purchase_date, held_by_user_id, grant_to_user_id, grant_product_id,
         grant_quantity, revoke_from_user_id, revoke_product_id, revoke_quantity, store)
    SELECT f.fingerprint, f.kind, k.severity, 'open' AS status, f.transaction_id,
           f.original_transaction_id, f.user_id, f.product_id, f.upload_id,
           k.suggested_action, f.evidence, :'run_id'::bigint AS first_seen_run, :'run_id'::bigint AS last_seen_run,
           f.user_id, f.amount_milli, f.currency, f.purchase_date, f.held_by_user_id, f.grant_to_user_id,
           f.grant_product_id, f.grant_quantity, f.revoke_from_user_id, f.revoke_product_id, f.revoke_quantity,
           f.store
      FROM diff_findings f JOIN diff_kinds k ON k.kind = f.kind
    ON CONFLICT ((reconcile.text_digest(fingerprint))) DO UPDATE
       SET last_seen_run = EXCLUDED.last_seen_run,
           -- An open item follows its finding; a decided one keeps what it was decided on.
           (severity, suggested_action, user_id, product_id, original_transaction_id, upload_id, evidence,
            detected_user_id, amount_milli, currency, purchase_date, held_by_user_id, grant_to_user_id,
            grant_product_id, grant_quantity, revoke_from_user_id, revoke_product_id, revoke_quantity,
            updated_at) = (
               SELECT EXCLUDED.severity, EXCLUDED.suggested_action, EXCLUDED.user_id, EXCLUDED.product_id,
                      EXCLUDED.original_transaction_id, EXCLUDED.upload_id, EXCLUDED.evidence, EXCLUDED.detected_user_id, EXCLUDED.amount_milli,
                      EXCLUDED.currency, EXCLUDED.purchase_date, EXCLUDED.held_by_user_id,
                      EXCLUDED.grant_to_user_id, EXCLUDED.grant_product_id, EXCLUDED.grant_quantity,
                      EXCLUDED.revoke_from_user_id, EXCLUDED.revoke_product_id, EXCLUDED.revoke_quantity,
                      now()
                WHERE r.status IN ('open', 'in_review', 'awaiting_approval')
               UNION ALL
               SELECT r.severity, r.suggested_action, r.user_id, r.product_id, r.original_transaction_id,
                      r.upload_id, r.evidence,
                      r.detected_user_id, r.amount_milli, r.currency, r.purchase_date,
                      r.held_by_user_id, r.grant_to_user_id, r.grant_product_id, r.grant_quantity,
                      r.revoke_from_user_id, r.revoke_product_id, r.revoke_quantity, r.updated_at
                WHERE r.status NOT IN ('open', 'in_review', 'awaiting_approval'))
    RETURNING r.id, (xmax = 0) AS inserted
), events AS (
    INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
    SELECT id, :'run_id'::bigint, :'actor', NULL, 'open', 'detected' FROM upserted WHERE inserted
    RETURNING review_item_id
)
SELECT count(*) FILTER (WHERE inserted) AS created, count(*) FILTER (WHERE NOT inserted) AS refreshed
  FROM upserted;
