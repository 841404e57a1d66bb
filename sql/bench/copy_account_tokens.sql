-- The app account tokens StoreKit 2 clients bind their purchases with, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.account_tokens
-- Values: none.
COPY reconcile.account_tokens (app_account_token, user_id) FROM STDIN;
