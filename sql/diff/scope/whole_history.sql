-- Stage: scope of a run over the whole history (no `--since`).
-- Reads:  reconcile.apple_transactions, reconcile.account_tokens, reconcile.upload_verifications,
--         :products, :deliveries
-- Writes: diff_scope, diff_scope_uploads
-- Values: :'until' (timestamptz), :'accepted_apps' (text[]: `store/app`), :'counted' (text: 'Production' or
--         'Sandbox'), :'judge_before' (timestamptz), :'work_mem' (text: Differ.workMem, restored
--         after the two passes over the whole tables), :'pass_work_mem' (text: Differ.passWorkMem).
--
-- Every transaction bought and every delivery made before the window's end is in scope, but
-- only those that can hold a finding are kept. One FULL JOIN of the white table and the ledger
-- on the transaction id keeps every row that is not plainly clean: one Apple transaction of an
-- accepted bundle and the counted environment, old enough to judge, not revoked, one unrevoked
-- delivery of the same product and quantity to the one account whose uploads carried it, its
-- binding (token, or username equal to or hashing to the uploader) naming that same account,
-- and no restore around it. Whatever can hold a finding is kept (and more: every restore, every
-- refund); the exact rules then run over this scope only.
--
-- Who carried the transaction and what their claims bound it to are kept on the white row
-- (claimed_by, claim_token, claim_usernames_name_uploader: migration 0011, kept current by
-- triggers on the claims), so the claims are not read here. claimed_by is NULL for a transaction
-- nobody carried or several accounts did: such a row is never plainly clean. Tokens are mapped
-- to accounts here, from the current reference table.
--
-- Bound values, so that the planner sees that the window is everything and scans instead of
-- walking the purchase-date index.
--
-- Each side judges what it alone decides before the join (`clean`: every condition true; a NULL
-- one counts as false, as a missing row does), behind OFFSET 0 so that the planner computes it
-- there: the join's hash batches then carry a flag instead of the columns it was computed from,
-- and the token map is read for the rows still clean after the join only. At 5M the pass took
-- 6.5 s instead of 9.0 s (docs/benchmarks.md, thirteenth session).
--
-- The two passes over the whole tables run with a few MB for each hash: the ledger's grouping
-- below took 4.0–4.7 s with the diff's 256 MB (a hash table of millions of keys in five batches,
-- its probes missing the CPU's caches) and 2.1–2.5 s split into 129 batches of 4 MB; the FULL
-- JOIN the same or a little less (docs/benchmarks.md, twelfth session). The later stages, whose
-- hashes are of the scope, keep the diff's memory.
SELECT set_config('work_mem', :'pass_work_mem'::text, true) AS work_mem;

INSERT INTO diff_scope (transaction_id)
SELECT coalesce(x.transaction_id, x.delivered_transaction_id)
  FROM (SELECT a.transaction_id, d.transaction_id AS delivered_transaction_id, a.token, d.user_id,
               coalesce(a.clean AND d.clean AND d.product_id = a.product_id AND d.quantity = a.quantity
                        AND a.claimed_by = d.user_id, false) AS clean
          FROM (SELECT a.transaction_id, a.product_id, a.quantity, a.claimed_by,
                       coalesce(a.app_account_token, a.claim_token) AS token,
                       coalesce(reconcile.app_accepted(a.store, a.bundle_id, :'accepted_apps'::text[])
                                AND a.environment = :'counted'::text
                                AND a.purchase_date <= :'judge_before'::timestamptz
                                AND a.revocation_date IS NULL AND NOT a.pending
                                AND (a.transaction_id = a.original_transaction_id
                                     OR coalesce(a.product_type, p.product_type) IS DISTINCT FROM 'non_consumable')
                                AND (a.app_account_token IS NOT NULL OR a.claim_usernames_name_uploader),
                                false) AS clean
                  FROM reconcile.apple_transactions a
                  LEFT JOIN :products p ON p.product_id = a.product_id
                 WHERE a.purchase_date < :'until'::timestamptz
                OFFSET 0) a
          FULL JOIN (SELECT transaction_id, user_id, product_id, quantity, revoked_at IS NULL AS clean
                       FROM :deliveries
                      WHERE delivered_at < :'until'::timestamptz OR revoked_at IS NOT NULL
                     OFFSET 0) d
            ON d.transaction_id = a.transaction_id
        OFFSET 0) x
  -- Only a row clean so far has its token looked up: the others' key is NULL, which a hash join
  -- keeps in its first batch instead of writing it out.
  LEFT JOIN reconcile.account_tokens k ON k.app_account_token = CASE WHEN x.clean THEN x.token END
 WHERE NOT coalesce(x.clean AND (x.token IS NULL OR k.user_id = x.user_id), false)
ON CONFLICT DO NOTHING;

-- A transaction credited twice looks clean row by row: one grouping of the ledger adds the
-- transaction ids it repeats.
INSERT INTO diff_scope (transaction_id)
SELECT transaction_id FROM :deliveries
 GROUP BY transaction_id
HAVING count(*) > 1 AND bool_or(delivered_at < :'until'::timestamptz OR revoked_at IS NOT NULL)
ON CONFLICT DO NOTHING;

SELECT set_config('work_mem', :'work_mem'::text, true) AS work_mem;

-- An upload is plainly clean when it was verified for a bundle the job accepts: every other
-- verified upload is kept, not only those this run verified (scope/touched_by_run.sql), so that a
-- bundle id the operator stopped accepting makes its old uploads foreign_bundle findings, as a
-- run over the whole history in a fresh database would.
INSERT INTO diff_scope_uploads (upload_id)
SELECT upload_id FROM reconcile.upload_verifications
 WHERE state = 'verified' AND bundle_id IS NOT NULL
   AND NOT reconcile.app_accepted(store, bundle_id, :'accepted_apps'::text[]);
