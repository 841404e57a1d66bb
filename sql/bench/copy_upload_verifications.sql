-- The verifications of the history's uploads, as if earlier runs had made them, loaded by COPY.
-- Reads:  nothing.
-- Writes: reconcile.upload_verifications
-- Values: none.
COPY reconcile.upload_verifications (upload_id, state, method, apple_status, environment, bundle_id,
                                     attempts, verified_at, updated_at) FROM STDIN;
