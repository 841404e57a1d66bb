-- Stage: queue, step 2 — one item per fingerprint ever: created when new (with a 'detected'
-- event), refreshed when seen again; the evidence of an item a person decided stays as it was.
-- Who gets the goods and who loses them (grant_*, revoke_* columns) are completed from the
-- evidence by the trigger of migration 0006; a wrong_account item brings the account its wrong
-- delivery credited in revoke_from_user_id. The finding's account, amount and purchase date as
-- detected (detected_user_id, amount_milli, currency, purchase_date) are kept with the evidence:
-- the report lists an item carried over unchanged from them (75_unchanged.sql). An open item's
-- account follows its finding's (a buyer bound later, a delivery moved): the queue shows whom the
-- finding is about now, as the report and a run over the whole history do; a decided item keeps
-- the account it was decided for.
-- Reads:  diff_findings, diff_kinds
-- Writes: reconcile.review_items, reconcile.review_events
-- Values: :'run_id' (bigint), :'actor' (text: who opened the items, the job's name 'reconcile'
--         or the person whose desk lookup enqueued them).
-- Returns: created, refreshed.
WITH upserted AS (
    INSERT INTO reconcile.review_items AS r
        (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id,
         product_id, upload_id, suggested_action, evidence, first_seen_run, last_seen_run, revoke_from_user_id,
         detected_user_id, amount_milli, currency, purchase_date, held_by_user_id)
    SELECT f.fingerprint, f.kind, k.severity, 'open' AS status, f.transaction_id,
           f.original_transaction_id, f.user_id, f.product_id, f.upload_id,
           k.suggested_action, f.evidence, :'run_id'::bigint AS first_seen_run, :'run_id'::bigint AS last_seen_run,
           f.credited_user_id AS revoke_from_user_id, f.user_id, f.amount_milli, f.currency, f.purchase_date,
           f.held_by_user_id
      FROM diff_findings f JOIN diff_kinds k ON k.kind = f.kind
    ON CONFLICT ((reconcile.text_digest(fingerprint))) DO UPDATE
       SET last_seen_run = EXCLUDED.last_seen_run,
           user_id = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.user_id ELSE r.user_id END,
           evidence = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.evidence ELSE r.evidence END,
           detected_user_id = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.detected_user_id
                                   ELSE r.detected_user_id END,
           amount_milli = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.amount_milli ELSE r.amount_milli END,
           currency = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.currency ELSE r.currency END,
           purchase_date = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.purchase_date
                                ELSE r.purchase_date END,
           held_by_user_id = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.held_by_user_id
                                  ELSE r.held_by_user_id END,
           updated_at = CASE WHEN r.status IN ('open', 'in_review') THEN now() ELSE r.updated_at END
    RETURNING r.id, (xmax = 0) AS inserted
), events AS (
    INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
    SELECT id, :'run_id'::bigint, :'actor', NULL, 'open', 'detected' FROM upserted WHERE inserted
    RETURNING review_item_id
)
SELECT count(*) FILTER (WHERE inserted) AS created, count(*) FILTER (WHERE NOT inserted) AS refreshed
  FROM upserted;
