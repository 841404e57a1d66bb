-- Reads no row but every column the job reads from the uploads (Preflight.requiredColumns): fails
-- when the job's role may not read them.
-- Reads:  :uploads
-- Writes: nothing.
-- Values: none.
SELECT id, user_id, kind, payload, application_username, app_account_token, claimed_transaction_id, device,
       uploaded_at
  FROM :uploads LIMIT 0;
