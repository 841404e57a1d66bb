-- What the ledger and the queue say of a transaction Apple asks about, its family
-- (family.sql: for a non-consumable, its restores too): the one account holding the family's
-- unrevoked deliveries (none when several do), whether any is delivered, the account the asked
-- transaction's token or username binds, and whether an open item about the family disputes who
-- holds it (the kinds FindingKind names with disputesTheHolder: wrong_account, shared_receipt),
-- and, for a transaction no run has put in the white table yet (the hourly sync answers before
-- any run applied its request; the nightly rules then cannot judge it: disputed_findings.sql),
-- whether its token or username binds an account other than the one holding its delivery.
-- Reads:  :deliveries, reconcile.account_tokens, reconcile.transaction_claims,
--         reconcile.review_items, reconcile.apple_transactions
-- Writes: nothing.
-- Values: :'transaction_id' (text), :'transaction_ids' (text[]: its family, family.sql),
--         :'app_account_token' (uuid, null: the request's), :'disputed_kinds' (text[]).
SELECT f.*, (f.unjudgeable AND f.delivered AND f.holder IS NOT NULL AND f.bound_buyer IS NOT NULL
             AND f.holder <> f.bound_buyer) AS bound_elsewhere
  FROM (
SELECT (SELECT min(d.user_id) FROM :deliveries d
         WHERE d.transaction_id = ANY(:'transaction_ids'::text[]) AND d.revoked_at IS NULL
        HAVING count(DISTINCT d.user_id) = 1) AS holder,
       EXISTS (SELECT 1 FROM :deliveries d
                WHERE d.transaction_id = ANY(:'transaction_ids'::text[]) AND d.revoked_at IS NULL) AS delivered,
       coalesce(
         (SELECT k.user_id FROM reconcile.account_tokens k
           WHERE k.app_account_token = coalesce(:'app_account_token'::uuid, a.app_account_token)),
         (SELECT min(c.user_id) FROM reconcile.transaction_claims c
           WHERE c.transaction_id = :'transaction_id'::text AND c.username_names_uploader
          HAVING count(DISTINCT c.user_id) = 1)
       ) AS bound_buyer,
       EXISTS (SELECT 1 FROM reconcile.review_items i
                WHERE i.transaction_id = ANY(:'transaction_ids'::text[]) AND i.kind = ANY(:'disputed_kinds'::text[])
                  AND i.status IN ('open', 'in_review', 'awaiting_approval')) AS disputed,
       a.transaction_id IS NULL AS unjudgeable
  FROM (SELECT :'transaction_id'::text AS transaction_id) q
  LEFT JOIN reconcile.apple_transactions a ON a.transaction_id = q.transaction_id
) f;
