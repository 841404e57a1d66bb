-- Stage: buyer, step 2 — the accounts a binding can name, with their SHA-256.
-- Reads:  diff_claims, diff_dl, diff_bindings, reconcile.account_tokens, :uploads, :deliveries
-- Writes: diff_people (accounts in scope, those the tokens map to, every known account a binding
--         names verbatim); diff_names (name), diff_hashes (hash) — usernames that look like a
--         SHA-256 no account in diff_people has.
-- Values: none.
--
-- SPEC section 5: a binding resolves against every account the job knows — those with an
-- upload, a ledger row or a token — not only the accounts of the night's scope; otherwise a
-- nightly run and a run over the whole history would name different buyers. Each step reads
-- indexes, so the answer does not depend on how much history the run looks at.
INSERT INTO diff_people (user_id, hash)
SELECT user_id, reconcile.account_hash(user_id)
  FROM (SELECT user_id FROM diff_claims UNION SELECT user_id FROM diff_dl
        UNION SELECT k.user_id FROM reconcile.account_tokens k
               WHERE k.app_account_token IN (SELECT token FROM diff_bindings)) known
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE IF NOT EXISTS diff_names (name text) ON COMMIT DELETE ROWS;
INSERT INTO diff_names (name)
SELECT username AS name FROM diff_bindings WHERE username IS NOT NULL
UNION SELECT token::text FROM diff_bindings WHERE token IS NOT NULL
UNION SELECT upper(token::text) FROM diff_bindings WHERE token IS NOT NULL;

ANALYZE diff_names;

INSERT INTO diff_people (user_id, hash)
SELECT user_id, reconcile.account_hash(user_id)
  FROM (SELECT u.user_id FROM :uploads u WHERE u.user_id IN (SELECT name FROM diff_names)
        UNION SELECT d.user_id FROM :deliveries d WHERE d.user_id IN (SELECT name FROM diff_names)
        UNION SELECT k.user_id FROM reconcile.account_tokens k WHERE k.user_id IN (SELECT name FROM diff_names)) named
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE IF NOT EXISTS diff_hashes (hash text) ON COMMIT DELETE ROWS;
INSERT INTO diff_hashes (hash)
SELECT DISTINCT lower(b.username) AS hash FROM diff_bindings b
 WHERE b.username ~ '^[0-9a-fA-F]{64}$'
   AND NOT EXISTS (SELECT 1 FROM diff_people p WHERE p.user_id = b.username)
   AND NOT EXISTS (SELECT 1 FROM diff_people p WHERE p.hash = lower(b.username));

ANALYZE diff_hashes;
