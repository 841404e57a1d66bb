-- The history's uploads, with their ids, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.receipt_uploads
-- Values: none.
COPY reconcile.receipt_uploads (id, user_id, kind, payload, application_username, app_account_token,
                                claimed_transaction_id, device, uploaded_at) FROM STDIN;
