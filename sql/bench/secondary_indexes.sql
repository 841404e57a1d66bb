-- The secondary indexes of one of the job's tables (none that backs a constraint), each as the
-- statement that drops it and the one that builds it again: a bulk load drops them first and
-- builds them afterwards, which sorts each once instead of inserting millions of random keys.
-- Reads:  the catalog
-- Writes: nothing.
-- Values: :'table' (text: a table of schema reconcile).
SELECT format('DROP INDEX reconcile.%I', i.indexname) AS drop_statement, i.indexdef
  FROM pg_indexes i
 WHERE i.schemaname = 'reconcile' AND i.tablename = :'table'::text
   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname);
