-- The app account tokens of the demo's StoreKit 2 players, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.account_tokens
-- Values: none.
COPY reconcile.account_tokens (app_account_token, user_id) FROM STDIN;
