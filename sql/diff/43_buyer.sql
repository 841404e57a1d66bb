-- Stage: buyer, step 4 — each transaction's buyer (SPEC section 5).
-- Reads:  diff_bindings, diff_people, reconcile.account_tokens
-- Writes: diff_buyer (transaction_id, uploaders, buyer: NULL when unknown, basis: how it was
--         resolved — app_account_token, application_username or uploader)
-- Values: none.
--
-- The appAccountToken (through reconcile.account_tokens, or equal to an account id), else the
-- applicationUsername (an account id or the lowercase hex SHA-256 of one), else the one
-- uploader; several uploaders and no binding leave the buyer unknown. A transaction no upload
-- carried (a Server API history or a notification brought it) has no uploader: the one account
-- whose history listed it stands in (basis uploader, as the account that will be granted), and
-- histories fetched for several accounts (two app accounts on one Apple ID) leave it unknown. A
-- history fetched for one account is recorded as listed by every account an earlier fetch of the
-- same history listed it for (ServerAPILookups.shareListing), so the count does not depend on
-- when each history was fetched.
ANALYZE diff_people;

CREATE TEMP TABLE IF NOT EXISTS diff_buyer (transaction_id text, uploaders bigint, buyer text, basis text)
    ON COMMIT DELETE ROWS;
CREATE INDEX IF NOT EXISTS diff_buyer_transaction_id ON diff_buyer (transaction_id);

INSERT INTO diff_buyer (transaction_id, uploaders, buyer, basis)
SELECT b.transaction_id, b.uploaders,
       coalesce(k.user_id, tp.user_id, up.user_id,
                CASE WHEN b.uploaders = 1 THEN b.uploader
                     WHEN b.uploaders = 0 AND b.listers = 1 THEN b.lister END) AS buyer,
       CASE WHEN k.user_id IS NOT NULL THEN 'app_account_token'
            WHEN tp.user_id IS NOT NULL THEN 'app_account_token'
            WHEN up.user_id IS NOT NULL THEN 'application_username'
            WHEN b.uploaders = 1 OR (b.uploaders = 0 AND b.listers = 1) THEN 'uploader'
       END AS basis
  FROM diff_bindings b
  -- A lookup per binding through the token's primary key, whatever the size of the table, and
  -- none for a binding without a token or a username. LIMIT 1 (the key holds one row) keeps the
  -- planner from turning the lookup into a hash of the whole token table: 250,000 rows hashed for
  -- every lookup of the support desk, whose customer may have no token at all.
  LEFT JOIN LATERAL (SELECT k.user_id FROM reconcile.account_tokens k
                      WHERE b.token IS NOT NULL AND k.app_account_token = b.token LIMIT 1) k ON true
  LEFT JOIN LATERAL (SELECT p.user_id FROM diff_people p
                      WHERE b.token IS NOT NULL AND lower(p.user_id) = b.token::text LIMIT 1) tp ON true
  LEFT JOIN LATERAL (SELECT p.user_id FROM diff_people p
                      WHERE b.username IS NOT NULL AND (p.user_id = b.username OR p.hash = lower(b.username))
                      ORDER BY (p.user_id = b.username) DESC, p.user_id LIMIT 1) up ON true;

ANALYZE diff_buyer;
