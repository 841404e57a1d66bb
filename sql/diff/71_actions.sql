-- Stage: actions — what a decision of each finding gives and takes back (SPEC section 6), stored
-- with its item so that a person's decision reads it instead of the evidence: a grant gives
-- Apple's product × quantity to the buyer; a revoke takes back the delivery the finding is about;
-- a move does both. Generic: a rule that knows more set it in its row (50_findings_table.sql):
-- how many units a grant gives (quantity_mismatch: the missing ones), whose delivery and how many
-- of its units a revoke takes back.
-- - The buyer: the one the diff resolved (the evidence's `buyer`); none when it is unknown.
-- - The delivery: among the evidence's unrevoked deliveries, the rule's account's when it named
--   one (nothing when that account holds none), else the finding's account's when it holds one,
--   else the one account holding unrevoked deliveries; the latest such delivery. Its quantity
--   unless the rule named how many units go back.
-- Reads:  diff_findings (evidence, from 70_evidence.sql)
-- Writes: diff_findings.grant_to_user_id, grant_product_id, grant_quantity, revoke_from_user_id,
--         revoke_product_id, revoke_quantity
-- Values: none.
UPDATE diff_findings f
   SET grant_to_user_id = f.evidence->'buyer'->>'user_id',
       grant_product_id = f.evidence->'apple_transaction'->>'product_id',
       grant_quantity = coalesce(f.grant_quantity, (f.evidence->'apple_transaction'->>'quantity')::integer),
       (revoke_from_user_id, revoke_product_id, revoke_quantity) = (
           SELECT e->>'user_id', e->>'product_id', coalesce(f.revoke_quantity, (e->>'quantity')::integer)
             FROM jsonb_array_elements(f.evidence->'deliveries') WITH ORDINALITY AS x(e, n)
            WHERE e->>'revoked_at' IS NULL
              AND CASE WHEN f.revoke_from_user_id IS NOT NULL THEN e->>'user_id' = f.revoke_from_user_id
                       ELSE e->>'user_id' IS NOT DISTINCT FROM f.user_id
                            OR (SELECT count(DISTINCT e2->>'user_id')
                                  FROM jsonb_array_elements(f.evidence->'deliveries') e2
                                 WHERE e2->>'revoked_at' IS NULL) = 1
                  END
            ORDER BY (e->>'user_id' IS NOT DISTINCT FROM f.user_id) DESC, x.n DESC
            LIMIT 1);
