-- Stage: buyer, step 1 — each transaction's binding and uploaders.
-- Reads:  diff_tx, diff_claims
-- Writes: diff_bindings (transaction_id, token: Apple's appAccountToken or else the first
--         upload's (by upload id), username: a Play purchase's own obfuscatedAccountId, else the
--         first upload's applicationUsername (for a Play upload, the signed obfuscatedAccountId
--         it carried: PlayUploadVerifier never takes the upload row's own column),
--         uploaders: distinct accounts that uploaded it, uploader: the least of them;
--         listers: distinct accounts whose Server API history listed it, lister: the least of
--         them);
--         diff_people (user_id, hash), empty, for the next steps.
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS diff_bindings (
    transaction_id text, token uuid, username text, uploaders bigint, uploader text, listers bigint, lister text
) ON COMMIT DELETE ROWS;

INSERT INTO diff_bindings (transaction_id, token, username, uploaders, uploader, listers, lister)
SELECT t.transaction_id, coalesce(t.app_account_token, c.token) AS token,
       coalesce(t.obfuscated_account_id, c.username) AS username,
       coalesce(c.uploaders, 0) AS uploaders, c.uploader, coalesce(c.listers, 0) AS listers, c.lister
  FROM diff_tx t
  LEFT JOIN (SELECT transaction_id,
                    (array_agg(app_account_token ORDER BY upload_id)
                        FILTER (WHERE uploaded AND app_account_token IS NOT NULL))[1] AS token,
                    (array_agg(application_username ORDER BY upload_id)
                        FILTER (WHERE uploaded AND application_username IS NOT NULL))[1] AS username,
                    count(DISTINCT user_id) FILTER (WHERE uploaded) AS uploaders,
                    min(user_id) FILTER (WHERE uploaded) AS uploader,
                    count(DISTINCT user_id) FILTER (WHERE NOT uploaded) AS listers,
                    min(user_id) FILTER (WHERE NOT uploaded) AS lister
               FROM diff_claims GROUP BY transaction_id) c ON c.transaction_id = t.transaction_id;

ANALYZE diff_bindings;

-- Account ids can be of any length: unique on their digest, looked up through hash indexes.
CREATE TEMP TABLE IF NOT EXISTS diff_people (user_id text NOT NULL, hash text NOT NULL) ON COMMIT DELETE ROWS;
CREATE UNIQUE INDEX IF NOT EXISTS diff_people_digest ON diff_people (reconcile.text_digest(user_id));
CREATE INDEX IF NOT EXISTS diff_people_user_id ON diff_people USING hash (user_id);
CREATE INDEX IF NOT EXISTS diff_people_hash ON diff_people (hash);
CREATE INDEX IF NOT EXISTS diff_people_lower ON diff_people USING hash (lower(user_id));
