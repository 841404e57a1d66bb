-- Stage: scope of a lookup of given transactions (the support desk's view of one customer).
-- Reads:  reconcile.transaction_claims, :uploads
-- Writes: diff_scope, diff_scope_uploads
-- Values: :'transaction_ids' (text[]).
--
-- Exactly the given transactions (the next stage adds a non-consumable's family), and the
-- uploads that carried them or said they reported them. diff_scope is empty here (one diff per
-- transaction: checks/work_tables.sql), so DISTINCT is all the key needs: ON CONFLICT's
-- speculative insertion doubled the statement's time for a customer of a thousand purchases.
INSERT INTO diff_scope (transaction_id)
SELECT DISTINCT transaction_id FROM unnest(:'transaction_ids'::text[]) AS given(transaction_id)
 WHERE transaction_id IS NOT NULL;

INSERT INTO diff_scope_uploads (upload_id)
SELECT c.upload_id FROM reconcile.transaction_claims c
 WHERE c.transaction_id = ANY(:'transaction_ids'::text[])
UNION SELECT u.id FROM :uploads u
 WHERE u.claimed_transaction_id = ANY(:'transaction_ids'::text[]);
