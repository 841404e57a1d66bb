-- What the diff needs at the sizes of SPEC section 12 (millions of transactions, nightly runs
-- that touch a few hundred): an index for every way a run finds what it can have changed, and
-- account hashes that are looked up or stored instead of computed for every account.
-- Operators who point RECONCILE_*_RELATION at their own tables need the same indexes there.

-- The seed apps put the lowercase hex SHA-256 of the account id in applicationUsername.
-- Declared IMMUTABLE so that it can be indexed: convert_to is only STABLE because encodings
-- could change, and a database's encoding never changes. PL/pgSQL because a SQL function
-- around a STABLE call is not inlined and then costs more per call.
CREATE FUNCTION reconcile.account_hash(account text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ BEGIN RETURN encode(sha256(convert_to(account, 'UTF8')), 'hex'); END $$;

-- The uploader a hashed applicationUsername names, found without hashing every account.
CREATE INDEX receipt_uploads_account_hash_idx ON reconcile.receipt_uploads (reconcile.account_hash(user_id));

-- Whether a claim's applicationUsername names its own uploader, verbatim or hashed: a run over
-- the whole history reads this instead of hashing the account of every claim.
ALTER TABLE reconcile.transaction_claims ADD COLUMN username_names_uploader boolean
    GENERATED ALWAYS AS (application_username = user_id
                         OR lower(application_username) = reconcile.account_hash(user_id)) STORED;

-- What a run changed and what its window holds (Differ's scope), and the run's own
-- verifications (its summary, its foreign_bundle findings).
CREATE INDEX apple_transactions_last_seen_run_idx ON reconcile.apple_transactions (last_seen_run);
CREATE INDEX transaction_claims_run_idx ON reconcile.transaction_claims (run_id);
CREATE INDEX upload_verifications_last_run_idx ON reconcile.upload_verifications (last_run_id);
CREATE INDEX deliveries_delivered_at_idx ON reconcile.deliveries (delivered_at);
CREATE INDEX deliveries_revoked_at_idx ON reconcile.deliveries (revoked_at) WHERE revoked_at IS NOT NULL;
