-- The transactions bound to an app account token, by Apple's data or by a client's claim, and
-- the Google Play purchases whose obfuscatedAccountId is that token (an app that binds both
-- stores' purchases with one UUID), at most :'most' of them.
-- Reads:  reconcile.apple_transactions, reconcile.transaction_claims
-- Writes: nothing.
-- Values: :'token' (uuid), :'most' (integer: DeskService.maximumTransactions).
SELECT transaction_id FROM (
    SELECT transaction_id FROM reconcile.apple_transactions WHERE app_account_token = :'token'::uuid
    UNION SELECT transaction_id FROM reconcile.transaction_claims WHERE app_account_token = :'token'::uuid
    UNION SELECT transaction_id FROM reconcile.apple_transactions
     WHERE obfuscated_account_id IN (lower(:'token'::text), upper(:'token'::text)) AND store = 'google_play'
) q ORDER BY 1 LIMIT :'most'::integer;
