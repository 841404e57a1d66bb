-- The approval threshold recorded in the database (SPEC section 17, migration 0027): per currency,
-- the limit above which a decision that makes the app act waits, and which process recorded it.
-- Read in the decision's transaction, which applies the stricter of it and its own setting.
-- Reads:  reconcile.approval_thresholds
-- Writes: nothing.
-- Values: none.
SELECT currency, above_milli, recorded_at, recorded_by FROM reconcile.approval_thresholds ORDER BY currency;
