-- The hashed account name a StoreKit 1 client sends as applicationUsername (hex SHA-256 of its
-- UTF-8 bytes), by the job's own definition, reconcile.account_hash (migration 0005).
-- Reads:  nothing.
-- Writes: nothing.
-- Values: :'account' (text).
SELECT reconcile.account_hash(:'account'::text);
