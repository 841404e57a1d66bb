-- Finding: refunded_delivery (medium, revoke) — Apple revoked or refunded the transaction, and the
-- unrevoked deliveries hold more than Apple's quantity minus the refunded units (after a full
-- refund: any unrevoked delivery).
-- Reads:  diff_key, diff_key_dl
-- Writes: diff_findings (fingerprint refunded_delivery:<transaction>; user_id: the account of the
--         first unrevoked delivery; amount: the unit price times the refunded units, none for a
--         Family Sharing revocation, which returns no money to anyone; revoke_quantity: the
--         refunded units, all a revoke takes back: after a prorated refund only its share;
--         extra_evidence: what Apple's revocation took back, for the person deciding)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date, revoke_quantity, extra_evidence)
SELECT 'refunded_delivery:' || k.transaction_id AS fingerprint, 'refunded_delivery' AS kind, k.transaction_id,
       k.original_transaction_id, d.first_user_id AS user_id, k.product_id, k.match_key,
       CASE WHEN k.revocation_type IS DISTINCT FROM 'FAMILY_REVOKE'
            THEN round(k.unit_price_milli * k.key_refunded_quantity) END AS amount_milli,
       k.currency, k.purchase_date, k.key_refunded_quantity AS revoke_quantity,
       jsonb_build_object('refunded_quantity', k.key_refunded_quantity, 'revocation_type', k.revocation_type,
                          'revocation_percentage', k.revocation_percentage) AS extra_evidence
  FROM diff_key k JOIN diff_key_dl d ON d.match_key = k.match_key
 WHERE k.key_judged AND k.counted AND k.key_revoked
   AND d.total_quantity > k.quantity - k.key_refunded_quantity;
