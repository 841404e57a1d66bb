-- The transactions of an app account, at most :'most' of them: what the account uploaded
-- (verified or not), was credited, or is bound to by an account token or, for Google Play, by
-- the purchase's obfuscatedAccountId (the account id or its lowercase hex SHA-256, SPEC section
-- 18): both stores' transactions.
-- Reads:  reconcile.transaction_claims, :deliveries, :uploads, reconcile.account_tokens,
--         reconcile.apple_transactions
-- Writes: nothing.
-- Values: :'user_id' (text), :'most' (integer: DeskService.maximumTransactions).
SELECT transaction_id FROM (
    SELECT transaction_id FROM reconcile.transaction_claims WHERE user_id = :'user_id'::text
    UNION SELECT transaction_id FROM :deliveries WHERE user_id = :'user_id'::text
    UNION SELECT claimed_transaction_id FROM :uploads
     WHERE user_id = :'user_id'::text AND claimed_transaction_id IS NOT NULL
    UNION SELECT a.transaction_id FROM reconcile.account_tokens k
      JOIN reconcile.apple_transactions a ON a.app_account_token = k.app_account_token
     WHERE k.user_id = :'user_id'::text
    UNION SELECT a.transaction_id FROM reconcile.apple_transactions a
     WHERE a.obfuscated_account_id IN (:'user_id'::text, encode(sha256(convert_to(:'user_id'::text, 'UTF8')), 'hex'))
       AND a.store = 'google_play'
) q ORDER BY 1 LIMIT :'most'::integer;
