-- StoreKit 1 receipts uploaded for a `reconcile run` to verify, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.receipt_uploads
-- Values: none.
COPY reconcile.receipt_uploads (user_id, kind, payload, uploaded_at) FROM STDIN;
