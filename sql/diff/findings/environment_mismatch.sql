-- Finding: environment_mismatch (low, investigate) — a sandbox (tester's) purchase credited as
-- if it were real money. The runner runs this rule only when RECONCILE_ENVIRONMENT=production.
-- Reads:  diff_key, diff_key_dl
-- Writes: diff_findings (fingerprint environment_mismatch:<transaction>; user_id: the least
--         account holding an unrevoked delivery)
-- Values: none.
INSERT INTO diff_findings (fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id,
                           match_key, amount_milli, currency, purchase_date)
SELECT 'environment_mismatch:' || k.transaction_id AS fingerprint, 'environment_mismatch' AS kind,
       k.transaction_id, k.original_transaction_id, d.least_user_id AS user_id, k.product_id, k.match_key,
       k.price_milli AS amount_milli, k.currency, k.purchase_date
  FROM diff_key k JOIN diff_key_dl d ON d.match_key = k.match_key
 WHERE k.key_judged AND k.environment = 'Sandbox';
