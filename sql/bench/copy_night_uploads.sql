-- One night's uploads (StoreKit 2, bound to its buyer's account token, and Google Play), loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.receipt_uploads
-- Values: none.
COPY reconcile.receipt_uploads (user_id, kind, payload, app_account_token, claimed_transaction_id,
                                uploaded_at) FROM STDIN;
