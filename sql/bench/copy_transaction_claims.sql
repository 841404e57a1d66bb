-- Who carried each of the history's transactions, loaded by COPY (with the claims' trigger off,
-- claims_trigger_off.sql).
-- Reads:  nothing.
-- Writes: reconcile.transaction_claims
-- Values: none.
COPY reconcile.transaction_claims (transaction_id, upload_id, user_id, application_username,
                                   app_account_token, source, created_at) FROM STDIN;
