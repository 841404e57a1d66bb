-- After the history's tables are loaded: the uploads' identity sequence past the explicit ids;
-- no arrival notes (migration 0014) for uploads that come with their verifications, as if
-- earlier runs had read them (they are no new work for the first run); fresh statistics for the
-- planner. Run outside a transaction: VACUUM refuses to run inside one.
-- Reads:  reconcile.receipt_uploads
-- Writes: the uploads' sequence, reconcile.upload_arrivals (emptied), every table's statistics
-- Values: none.
SELECT setval(pg_get_serial_sequence('reconcile.receipt_uploads', 'id'),
              (SELECT max(id) FROM reconcile.receipt_uploads));

DELETE FROM reconcile.upload_arrivals;

VACUUM ANALYZE;
