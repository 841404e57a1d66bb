-- Stage: scope, what the run itself touched (a window run and a whole-history run alike).
-- Reads:  reconcile.apple_transactions, reconcile.transaction_claims, reconcile.upload_verifications,
--         reconcile.transaction_lookups, reconcile.review_items, :uploads, :deliveries
-- Writes: diff_scope, diff_scope_uploads
-- Values: :'resumes_after' (bigint) — the last run that finished; "this run" is every run after it;
--         :'judge_open_items' (boolean) — false when the run carries unchanged open items over
--         (scope/changed_bindings.sql adds those whose inputs changed);
--         :'upload_kinds' (text[]: the kinds about an upload, FindingKind.isAboutAnUpload) — such
--         an item (foreign_bundle) is judged by its upload every run, and its evidence shows its
--         transaction's buyer: its transaction stays in scope.
--
-- Transactions Apple confirmed or changed in this run, what its uploads carried or said they
-- reported, the ledger transactions Apple answered a lookup about, the deliveries of accounts
-- whose uploads it verified (an earlier run could not judge them while those uploads were still
-- retrying), and every transaction an open review item is about (so that it can auto-resolve).
-- "This run" includes the runs since the last finished one: a run killed after it verified
-- uploads left work no diff judged. Each branch reads an index; the run id is a bound value, not
-- a read of a table, so that the planner sees how few rows lie past it.
INSERT INTO diff_scope (transaction_id)
SELECT transaction_id FROM reconcile.apple_transactions
 WHERE last_seen_run > :'resumes_after'::bigint
UNION SELECT transaction_id FROM reconcile.transaction_claims
 WHERE run_id > :'resumes_after'::bigint
UNION SELECT u.claimed_transaction_id FROM reconcile.upload_verifications v
        JOIN :uploads u ON u.id = v.upload_id
 WHERE v.last_run_id > :'resumes_after'::bigint AND u.claimed_transaction_id IS NOT NULL
UNION SELECT transaction_id FROM reconcile.transaction_lookups
 WHERE run_id > :'resumes_after'::bigint
UNION SELECT transaction_id FROM reconcile.review_items
 WHERE (:'judge_open_items'::boolean OR kind = ANY (:'upload_kinds'::text[]))
   AND status IN ('open', 'in_review', 'awaiting_approval') AND transaction_id IS NOT NULL
UNION SELECT d.transaction_id FROM :deliveries d
 WHERE d.user_id IN (SELECT u.user_id FROM reconcile.upload_verifications v
                       JOIN :uploads u ON u.id = v.upload_id
                      WHERE v.last_run_id > :'resumes_after'::bigint)
ON CONFLICT DO NOTHING;

-- The uploads this run verified, and those an open item about an upload is about.
INSERT INTO diff_scope_uploads (upload_id)
SELECT upload_id FROM reconcile.upload_verifications
 WHERE last_run_id > :'resumes_after'::bigint
UNION SELECT upload_id FROM reconcile.review_items
 WHERE kind = ANY (:'upload_kinds'::text[]) AND status IN ('open', 'in_review', 'awaiting_approval') AND upload_id IS NOT NULL;
