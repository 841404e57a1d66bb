-- What a run over the whole history reads from the claims to prove a transaction plainly clean,
-- kept on the white table (SPEC section 12: the diff near one FULL JOIN of the white table and
-- the ledger). Without it the first pass (sql/diff/23_scope_whole_history.sql) joins millions of
-- claims as a third table; with it, it is a two-table FULL JOIN plus the small token map.
--
-- claimed_by: the one account whose uploads carried the transaction, NULL when none did, when
--   several accounts did (a shared receipt), or when their claims carried more than one
--   appAccountToken. NULL never proves a row clean: the exact rules then judge it.
-- claim_token: the one appAccountToken those claims carried, NULL when none or several did. The
--   white row's own token, when Apple gave one, still comes first; the token is mapped to its
--   account when the diff runs (reconcile.account_tokens may change after the claim).
-- claim_usernames_name_uploader: every claim that carried no token but an applicationUsername
--   named its uploader by it, verbatim or hashed (transaction_claims.username_names_uploader).
--
-- Statement-level triggers with transition tables keep the three current whoever writes the
-- claims (the job, the desk, an operator by hand), in one UPDATE per statement: a claim recorded
-- after its transaction, by another account's upload or by a later run, clears claimed_by at
-- once. The facts are recomputed from every claim of each changed transaction, after locking its
-- white row: the job's upsert holds that lock from before it inserts claims, so of two runs
-- recording the same transaction for two accounts, the later reads the earlier's committed claim
-- (each statement of a VOLATILE function takes a fresh snapshot) and the facts end up NULL.
-- A white row written after its claims (never by the job, which writes the row first) keeps NULL
-- facts: slower (the exact rules judge it), never wrong.
ALTER TABLE reconcile.apple_transactions
    ADD COLUMN claimed_by text,
    ADD COLUMN claim_token uuid,
    ADD COLUMN claim_usernames_name_uploader boolean;

-- The facts of every transaction a statement's claims belong to, from all its claims; rows whose
-- facts are unchanged are not written again. (Transition tables are visible only in the trigger's
-- own function.)
CREATE FUNCTION reconcile.note_claim_changes() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog AS $$
DECLARE
    -- An UPDATE may move a claim to another transaction: both are refreshed.
    ids text := CASE TG_OP
        WHEN 'INSERT' THEN 'SELECT transaction_id FROM new_claims'
        WHEN 'UPDATE' THEN 'SELECT transaction_id FROM new_claims UNION SELECT transaction_id FROM old_claims'
        ELSE 'SELECT transaction_id FROM old_claims' END;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE reconcile.apple_transactions
           SET claimed_by = NULL, claim_token = NULL, claim_usernames_name_uploader = NULL
         WHERE claimed_by IS NOT NULL OR claim_token IS NOT NULL OR claim_usernames_name_uploader IS NOT NULL;
        RETURN NULL;
    END IF;
    -- Locked first, read in the next statement (a fresh snapshot): see the header.
    EXECUTE format(
        'SELECT 1 FROM reconcile.apple_transactions a WHERE a.transaction_id IN (%s) '
        'ORDER BY a.transaction_id FOR UPDATE', ids);
    EXECUTE format(
        $sql$
        UPDATE reconcile.apple_transactions a
           SET claimed_by = f.claimed_by, claim_token = f.claim_token,
               claim_usernames_name_uploader = f.claim_usernames_name_uploader
          FROM (SELECT i.transaction_id,
                       CASE WHEN count(DISTINCT c.user_id) = 1 AND count(DISTINCT c.app_account_token) <= 1
                            THEN min(c.user_id) END AS claimed_by,
                       CASE WHEN count(DISTINCT c.app_account_token) = 1
                            THEN min(c.app_account_token::text)::uuid END AS claim_token,
                       bool_and(c.app_account_token IS NOT NULL OR c.application_username IS NULL
                                OR c.username_names_uploader) AS claim_usernames_name_uploader
                  FROM (SELECT DISTINCT transaction_id FROM (%s) changed) i
                  LEFT JOIN reconcile.transaction_claims c ON c.transaction_id = i.transaction_id
                 GROUP BY i.transaction_id) f
         WHERE a.transaction_id = f.transaction_id
           AND (a.claimed_by, a.claim_token, a.claim_usernames_name_uploader)
               IS DISTINCT FROM (f.claimed_by, f.claim_token, f.claim_usernames_name_uploader)
        $sql$, ids);
    RETURN NULL;
END $$;

CREATE TRIGGER transaction_claims_note_inserts AFTER INSERT ON reconcile.transaction_claims
    REFERENCING NEW TABLE AS new_claims FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_claim_changes();
CREATE TRIGGER transaction_claims_note_updates AFTER UPDATE ON reconcile.transaction_claims
    REFERENCING OLD TABLE AS old_claims NEW TABLE AS new_claims
    FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_claim_changes();
CREATE TRIGGER transaction_claims_note_deletes AFTER DELETE ON reconcile.transaction_claims
    REFERENCING OLD TABLE AS old_claims FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_claim_changes();
CREATE TRIGGER transaction_claims_note_truncates AFTER TRUNCATE ON reconcile.transaction_claims
    FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_claim_changes();

-- The claims recorded so far, in one pass.
UPDATE reconcile.apple_transactions a
   SET claimed_by = f.claimed_by, claim_token = f.claim_token,
       claim_usernames_name_uploader = f.claim_usernames_name_uploader
  FROM (SELECT c.transaction_id,
               CASE WHEN count(DISTINCT c.user_id) = 1 AND count(DISTINCT c.app_account_token) <= 1
                    THEN min(c.user_id) END AS claimed_by,
               CASE WHEN count(DISTINCT c.app_account_token) = 1
                    THEN min(c.app_account_token::text)::uuid END AS claim_token,
               bool_and(c.app_account_token IS NOT NULL OR c.application_username IS NULL
                        OR c.username_names_uploader) AS claim_usernames_name_uploader
          FROM reconcile.transaction_claims c
         GROUP BY c.transaction_id) f
 WHERE a.transaction_id = f.transaction_id;
