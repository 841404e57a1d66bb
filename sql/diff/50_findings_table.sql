-- Stage: findings table — declared once per connection, empty at every transaction's start; one
--        file per kind under findings/ fills it.
-- Reads:  nothing.
-- Writes: diff_findings (one row per finding; the fingerprint is the kind and the identity of the
--         discrepancy, the same across runs, and keys the review queue);
--         diff_kinds (kind, severity, severity_rank, suggested_action) — FindingKind's table,
--         bound from Swift so that SQL never spells a severity or an action.
-- Values: :'kinds' (text[]), :'severities' (text[]), :'severity_ranks' (int[]),
--         :'suggested_actions' (text[]) — parallel arrays, one element per FindingKind.
CREATE TEMP TABLE IF NOT EXISTS diff_findings (
    fingerprint text NOT NULL,
    kind text NOT NULL,
    transaction_id text,
    original_transaction_id text,
    user_id text,
    product_id text,
    upload_id bigint,
    match_key text,
    amount_milli bigint,
    currency text,
    purchase_date timestamptz,
    evidence jsonb,
    -- What the rule adds to the shared evidence (70_evidence.sql), when it has more to say.
    extra_evidence jsonb,
    -- What a decision of the item gives and takes back (SPEC section 6's actions), completed by
    -- 71_actions.sql from the evidence. A rule that knows more says it here: whose delivery is
    -- taken back (wrong_account: the account the wrong delivery credited, the md5 in its
    -- fingerprint) and how many units (refunded_delivery: the refunded ones; quantity_mismatch:
    -- the units over Apple's quantity, and for a grant the units missing).
    grant_to_user_id text,
    grant_product_id text,
    grant_quantity integer,
    revoke_from_user_id text,
    revoke_product_id text,
    revoke_quantity integer,
    -- The account whose verification, while it has an upload pending, holds the finding back:
    -- its item is then neither auto-resolved (82) nor carried over unjudged (75). Each rule says
    -- which account it waits on; null when only its transaction's verification holds it
    -- (diff_blocked).
    held_by_user_id text,
    -- Which store the finding is about (60_findings_store.sql).
    store text NOT NULL DEFAULT 'app_store'
) ON COMMIT DELETE ROWS;
-- A fingerprint holds a transaction id of any length: unique on its digest, found by a hash index.
CREATE UNIQUE INDEX IF NOT EXISTS diff_findings_digest ON diff_findings (reconcile.text_digest(fingerprint));
CREATE INDEX IF NOT EXISTS diff_findings_fingerprint ON diff_findings USING hash (fingerprint);

CREATE TEMP TABLE IF NOT EXISTS diff_kinds (kind text, severity text, severity_rank integer, suggested_action text)
    ON COMMIT DELETE ROWS;
INSERT INTO diff_kinds (kind, severity, severity_rank, suggested_action)
SELECT kind, severity, severity_rank, suggested_action
  FROM unnest(:'kinds'::text[], :'severities'::text[], :'severity_ranks'::int[], :'suggested_actions'::text[])
       AS k(kind, severity, severity_rank, suggested_action);
