-- What the ledger and the queue say of a transaction Apple asks about, its family
-- (family.sql: for a non-consumable, its restores too): the one account holding the family's
-- unrevoked deliveries (none when several do), whether any is delivered, the account the asked
-- transaction's token or username binds, and whether an open item about the family disputes who
-- holds it (the kinds FindingKind names with disputesTheHolder: wrong_account, shared_receipt).
-- Reads:  :deliveries, reconcile.account_tokens, reconcile.transaction_claims,
--         reconcile.review_items, reconcile.apple_transactions
-- Writes: nothing.
-- Values: :'transaction_id' (text), :'transaction_ids' (text[]: its family, family.sql),
--         :'app_account_token' (uuid, null: the request's), :'disputed_kinds' (text[]).
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
                  AND i.status IN ('open', 'in_review', 'awaiting_approval')) AS disputed
  FROM (SELECT :'transaction_id'::text AS transaction_id) q
  LEFT JOIN reconcile.apple_transactions a ON a.transaction_id = q.transaction_id;
