-- The claims' facts on the white table (migration 0011: claimed_by, claim_token,
-- claim_usernames_name_uploader) get one definition, the view reconcile.claim_facts: one row per
-- claimed transaction. The claims' trigger (redefined here), the bench's generator (its check of
-- the facts it writes with the white rows) and anyone in psql read that view; 0011's backfill ran
-- once and stays as it was.
--
-- One change from 0011: a transaction whose last claim is deleted gets NULL facts, like one that
-- never had a claim and like every row after a TRUNCATE (0011 wrote claim_usernames_name_uploader
-- = true there). NULL never proves a row clean, so the diff's findings are the same.
CREATE VIEW reconcile.claim_facts AS
SELECT c.transaction_id,
       -- The one account whose claims carried the transaction, with at most one token.
       CASE WHEN count(DISTINCT c.user_id) = 1 AND count(DISTINCT c.app_account_token) <= 1
            THEN min(c.user_id) END AS claimed_by,
       -- The one appAccountToken the claims carried.
       CASE WHEN count(DISTINCT c.app_account_token) = 1
            THEN min(c.app_account_token::text)::uuid END AS claim_token,
       -- Every claim without a token but with an applicationUsername named its uploader by it.
       bool_and(c.app_account_token IS NOT NULL OR c.application_username IS NULL
                OR c.username_names_uploader) AS claim_usernames_name_uploader
  FROM reconcile.transaction_claims c
 GROUP BY c.transaction_id;

COMMENT ON VIEW reconcile.claim_facts IS
    'The claims'' facts of each claimed transaction, as apple_transactions keeps them (migrations 0011, 0013).';

-- As in 0011: the changed transactions' white rows are locked first, then read in the next
-- statement (a fresh snapshot). The view is filtered by an array of the changed ids, a condition
-- on its grouping column that PostgreSQL applies before grouping: only those claims are read.
CREATE OR REPLACE FUNCTION reconcile.note_claim_changes() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog AS $$
DECLARE
    -- An UPDATE may move a claim to another transaction: both are refreshed.
    ids text := CASE TG_OP
        WHEN 'INSERT' THEN 'SELECT transaction_id FROM new_claims'
        WHEN 'UPDATE' THEN 'SELECT transaction_id FROM new_claims UNION SELECT transaction_id FROM old_claims'
        ELSE 'SELECT transaction_id FROM old_claims' END;
    changed text[];
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE reconcile.apple_transactions
           SET claimed_by = NULL, claim_token = NULL, claim_usernames_name_uploader = NULL
         WHERE claimed_by IS NOT NULL OR claim_token IS NOT NULL OR claim_usernames_name_uploader IS NOT NULL;
        RETURN NULL;
    END IF;
    -- Transition tables are visible only in the trigger's own function, hence EXECUTE.
    EXECUTE format('SELECT array_agg(DISTINCT transaction_id) FROM (%s) changed', ids) INTO changed;
    PERFORM 1 FROM reconcile.apple_transactions a
      WHERE a.transaction_id = ANY (changed)
      ORDER BY a.transaction_id FOR UPDATE;
    UPDATE reconcile.apple_transactions a
       SET claimed_by = f.claimed_by, claim_token = f.claim_token,
           claim_usernames_name_uploader = f.claim_usernames_name_uploader
      FROM unnest(changed) AS i (transaction_id)
      LEFT JOIN (SELECT * FROM reconcile.claim_facts v WHERE v.transaction_id = ANY (changed)) f
             ON f.transaction_id = i.transaction_id
     WHERE a.transaction_id = i.transaction_id
       AND (a.claimed_by, a.claim_token, a.claim_usernames_name_uploader)
           IS DISTINCT FROM (f.claimed_by, f.claim_token, f.claim_usernames_name_uploader);
    RETURN NULL;
END $$;
