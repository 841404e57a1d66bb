-- The report rows kept for an item (reconcile.report_rows, migration 0023) also hold for a run that
-- judges the item again and finds it as it was: `inputs` is a digest of everything its rows are
-- rendered from (the item, its kind, transaction, accounts, product, evidence and amount; see
-- sql/reports/collect.sql), taken when they were rendered. The items about an upload
-- (foreign_bundle) are judged every night, and rendering and keeping their rows again was a tenth
-- of a quiet night (docs/benchmarks.md, issue 28 item 4). Null for rows rendered for an item
-- carried over unjudged (the run did not read its evidence): those hold by judged_run only.
-- Derived data: deleting any of it changes no report.
ALTER TABLE reconcile.report_rows ADD COLUMN inputs bytea;
