-- How many white rows were generated with other facts than their claims', as the view
-- reconcile.claim_facts (migration 0013) defines them and the claims' trigger writes them.
-- Reads:  reconcile.apple_transactions, reconcile.claim_facts
-- Writes: nothing.
-- Values: none.
SELECT count(*) FROM reconcile.apple_transactions a
  LEFT JOIN reconcile.claim_facts f ON f.transaction_id = a.transaction_id
 WHERE (a.claimed_by, a.claim_token, a.claim_usernames_name_uploader)
       IS DISTINCT FROM (f.claimed_by, f.claim_token, f.claim_usernames_name_uploader);
