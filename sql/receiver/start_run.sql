-- Stage: record a pass of the receiver that applies notifications or judges their transactions
-- as a run of kind 'receiver' (the review pages list it apart from nightly runs).
-- Reads:  nothing
-- Writes: reconcile.runs
-- Values: :'environment' (text), :'host' (text), :'pid' (integer).
--
-- Recorded finished and as a dry run, as the support desk's lookups are: a receiver pass is never
-- the last finished nightly run, whose watermark and snapshot the next nightly run continues from.
-- Its id is above that run's, so the next nightly run judges again every transaction it touched.
INSERT INTO reconcile.runs (kind, status, window_until, environment, dry_run, finished_at, host, pid)
VALUES ('receiver', 'completed', now(), :'environment'::text, true, now(), :'host'::text, :'pid'::integer)
RETURNING id;
