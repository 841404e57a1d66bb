-- Identifiers of any length (issue 14, item 6). A btree index entry holds at most about 2,700
-- bytes: one account id, transaction id, product id or fingerprint of a few kilobytes of
-- incompressible text in the app's ledger or an upload made the app's own INSERT fail, or the
-- run, or the queue's upsert. Every index over text the app or a customer writes is therefore
-- either a hash index (equality only, any length, WAL-logged) or a btree over a fixed-length
-- digest of the text; uniqueness (which a hash index cannot enforce) is a unique index on the
-- digest. Identifiers Apple signs (its transaction ids, in the white table and the claims) and
-- the desk's order IDs (at most 256 bytes, DeskQuery) keep their btree indexes.
-- Operators who point RECONCILE_*_RELATION at their own tables need the same there
-- (docs/operations.md).

-- SHA-256 of the text's bytes in the database encoding (UTF-8: the same as
-- sha256(convert_to(value, 'UTF8')), which cannot be indexed because convert_to is only STABLE).
-- The bytea input reads every byte as itself once each backslash is doubled; a plain SQL body of
-- immutable functions, so that it is inlined: no function call per row.
CREATE FUNCTION reconcile.text_digest(value text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sha256(replace(value, E'\\', E'\\\\')::bytea);

-- The app's tables (reference shape).
DROP INDEX reconcile.receipt_uploads_user_id_idx;
CREATE INDEX receipt_uploads_user_id_idx ON reconcile.receipt_uploads USING hash (user_id);
DROP INDEX reconcile.receipt_uploads_claimed_idx;
CREATE INDEX receipt_uploads_claimed_idx ON reconcile.receipt_uploads USING hash (claimed_transaction_id)
    WHERE claimed_transaction_id IS NOT NULL;
DROP INDEX reconcile.deliveries_transaction_id_idx;
CREATE INDEX deliveries_transaction_id_idx ON reconcile.deliveries USING hash (transaction_id);
DROP INDEX reconcile.deliveries_user_id_idx;
CREATE INDEX deliveries_user_id_idx ON reconcile.deliveries USING hash (user_id);
DROP INDEX reconcile.account_tokens_user_id_idx;
CREATE INDEX account_tokens_user_id_idx ON reconcile.account_tokens USING hash (user_id);
ALTER TABLE reconcile.refund_consent DROP CONSTRAINT refund_consent_pkey;
CREATE UNIQUE INDEX refund_consent_user_key ON reconcile.refund_consent (reconcile.text_digest(user_id));
CREATE INDEX refund_consent_user_idx ON reconcile.refund_consent USING hash (user_id);

-- Who carried what: the uploader's account.
DROP INDEX reconcile.transaction_claims_user_idx;
CREATE INDEX transaction_claims_user_idx ON reconcile.transaction_claims USING hash (user_id);

-- The Server API's lookups: one row per ledger transaction id, one per account. ON CONFLICT
-- names the digest: ON CONFLICT ((reconcile.text_digest(transaction_id))).
ALTER TABLE reconcile.transaction_lookups DROP CONSTRAINT transaction_lookups_pkey;
CREATE UNIQUE INDEX transaction_lookups_transaction_key
    ON reconcile.transaction_lookups (reconcile.text_digest(transaction_id));
CREATE INDEX transaction_lookups_transaction_idx ON reconcile.transaction_lookups USING hash (transaction_id);
ALTER TABLE reconcile.history_lookups DROP CONSTRAINT history_lookups_pkey;
CREATE UNIQUE INDEX history_lookups_user_key ON reconcile.history_lookups (reconcile.text_digest(user_id));
CREATE INDEX history_lookups_user_idx ON reconcile.history_lookups USING hash (user_id);
-- The accounts still waiting for an answer: few, read whole.
DROP INDEX reconcile.history_lookups_retry_idx;
CREATE INDEX history_lookups_retry_idx ON reconcile.history_lookups (reconcile.text_digest(user_id))
    WHERE result = 'retry';

-- The review queue: one item per fingerprint, unique on its digest. The fingerprints themselves
-- are unchanged, so every item keeps its identity: ON CONFLICT ((reconcile.text_digest(fingerprint))).
ALTER TABLE reconcile.review_items DROP CONSTRAINT review_items_fingerprint_key;
CREATE UNIQUE INDEX review_items_fingerprint_key ON reconcile.review_items (reconcile.text_digest(fingerprint));
CREATE INDEX review_items_fingerprint_idx ON reconcile.review_items USING hash (fingerprint);
DROP INDEX reconcile.review_items_user_idx;
CREATE INDEX review_items_user_idx ON reconcile.review_items USING hash (user_id);
DROP INDEX reconcile.review_items_transaction_idx;
CREATE INDEX review_items_transaction_idx ON reconcile.review_items USING hash (transaction_id);
