-- Stage: buyer, step 3 — uploaders whose SHA-256 a still unresolved username is.
-- Reads:  diff_hashes, :uploads (through the index on reconcile.account_hash(user_id))
-- Writes: diff_people
-- Values: none.
--
-- The runner runs this stage only when diff_hashes has a row: without the index (an operator's
-- own relation) it hashes every account.
INSERT INTO diff_people (user_id, hash)
SELECT user_id, reconcile.account_hash(user_id)
  FROM (SELECT DISTINCT u.user_id FROM :uploads u
         WHERE reconcile.account_hash(u.user_id) IN (SELECT hash FROM diff_hashes)) hashed
ON CONFLICT DO NOTHING;
