-- The players' StoreKit 1 uploads, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.receipt_uploads
-- Values: none.
COPY reconcile.receipt_uploads (user_id, kind, payload, application_username, claimed_transaction_id, device,
                                uploaded_at) FROM STDIN;
