-- One night's StoreKit 2 uploads, each bound to its buyer's account token, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.receipt_uploads
-- Values: none.
COPY reconcile.receipt_uploads (user_id, kind, payload, app_account_token, claimed_transaction_id,
                                uploaded_at) FROM STDIN;
