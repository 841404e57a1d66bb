-- Issue 38 (SPEC section 18, the desk): `reconcile lookup --user` and `--token` find a customer's
-- Google Play purchases by the purchase's own account binding (obfuscatedAccountId, the account id
-- or its SHA-256; an app may bind with its app account token), as Apple's by token.
CREATE INDEX apple_transactions_obfuscated_account_idx ON reconcile.apple_transactions (obfuscated_account_id)
    WHERE obfuscated_account_id IS NOT NULL;
