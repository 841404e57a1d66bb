-- Stage: scope tables — created empty; one of the scope stages below fills them.
-- Reads:  nothing.
-- Writes: diff_scope (transaction_id) — the transactions this diff judges exactly;
--         diff_scope_uploads (upload_id) — the uploads the foreign_bundle rule looks at (filled
--         once, by a UNION: no key to maintain).
-- Values: none.
CREATE TEMP TABLE diff_scope (transaction_id text PRIMARY KEY) ON COMMIT DROP;

CREATE TEMP TABLE diff_scope_uploads (upload_id bigint NOT NULL) ON COMMIT DROP;
