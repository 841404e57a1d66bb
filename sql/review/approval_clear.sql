-- An operator removes the recorded approval threshold (`reconcile review approval-threshold
-- --clear`, or before `--set` records another): every process configured with a threshold records
-- its own again when it starts or decides. Needs DELETE on the table (the schema's owner has it).
-- Reads:  reconcile.approval_thresholds
-- Writes: reconcile.approval_thresholds (deletes every row)
-- Values: none.
DELETE FROM reconcile.approval_thresholds;
