-- Stage: buyer, step 3 — known accounts (uploaders, ledger accounts, token holders) whose SHA-256
--        a still unresolved username is.
-- Reads:  diff_hashes, :uploads, :deliveries, reconcile.account_tokens (each through its index on
--         reconcile.account_hash(user_id): migrations 0005 and 0014)
-- Writes: diff_people
-- Values: none.
--
-- The runner runs this stage only when diff_hashes has a row: without the indexes (an operator's
-- own relations) it hashes every account of that relation.
INSERT INTO diff_people (user_id, hash)
SELECT user_id, reconcile.account_hash(user_id)
  FROM (SELECT u.user_id FROM :uploads u
         WHERE reconcile.account_hash(u.user_id) IN (SELECT hash FROM diff_hashes)
        UNION SELECT d.user_id FROM :deliveries d
         WHERE reconcile.account_hash(d.user_id) IN (SELECT hash FROM diff_hashes)
        UNION SELECT k.user_id FROM reconcile.account_tokens k
         WHERE reconcile.account_hash(k.user_id) IN (SELECT hash FROM diff_hashes)) hashed
ON CONFLICT DO NOTHING;
