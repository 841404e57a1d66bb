-- Whether the nightly rules, judging a refund request's transaction and its family now (the
-- diff's work tables of the caller's transaction, computed over exactly those transactions), find
-- who holds it disputed between accounts: a wrong_account or shared_receipt finding (the kinds
-- FindingKind names with disputesTheHolder). SPEC section 14: such a transaction gets no answer,
-- whether or not its item is in the queue yet (the receiver answers before it judges). A finding
-- whose item a person resolved or dismissed was settled by that person (the queue keeps their
-- decision: sql/diff/80_queue_reopen.sql); an auto-resolved item of a finding back again reopens.
-- Reads:  diff_findings, reconcile.review_items
-- Writes: nothing.
-- Values: :'transaction_ids' (text[]: the family, family.sql), :'disputed_kinds' (text[]).
SELECT EXISTS (
    SELECT 1 FROM diff_findings f
     WHERE f.transaction_id = ANY(:'transaction_ids'::text[]) AND f.kind = ANY(:'disputed_kinds'::text[])
       AND NOT EXISTS (SELECT 1 FROM reconcile.review_items i
                        WHERE i.fingerprint = f.fingerprint AND i.status IN ('resolved', 'dismissed')));
