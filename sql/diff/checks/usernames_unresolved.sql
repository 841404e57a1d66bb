-- A row while a username is still unresolved after 41_buyer_people.sql: only then does
-- 42_buyer_people_hashed.sql run (without the index on account_hash, an operator's own
-- relation, it hashes every account).
-- Reads:  diff_hashes
-- Writes: nothing.
-- Values: none.
SELECT 1 FROM diff_hashes LIMIT 1;
