-- Stage: judged inputs — a digest of what every finding depends on beyond its own rows: the
-- diff's SQL, the schema's version (a migration can change what the evidence shows), the settings
-- that decide findings, and the whole product catalogue (an operator's relation, small, with no
-- trigger to note its changes). A run whose digest differs from its
-- last finished run's judges every open item again (scope/changed_bindings.sql).
-- Reads:  :products, reconcile.schema_migrations, pg_trigger, pg_rewrite, pg_depend
-- Writes: nothing; returns digest — NULL when the ledger's changes are not noted: without the
--         triggers of migration 0009 on the deliveries relation (or on a table the view reads), an
--         edit in place leaves no trace, and every run judges every open item.
-- Values: :'rules' (text: every stage file), :'settings' (text: the settings that decide findings),
--         :'deliveries_name' (text: the deliveries relation's name).
WITH relation AS (
    SELECT :'deliveries_name'::text::regclass::oid AS oid
), noted AS (
    SELECT t.tgrelid, bit_or(t.tgtype::int) & 28 = 28 AS every_change -- INSERT 4, DELETE 8, UPDATE 16
      FROM pg_trigger t
     WHERE t.tgfoid = 'reconcile.note_ledger_changes'::regproc AND t.tgenabled <> 'D'
       AND t.tgrelid IN (SELECT oid FROM relation
                         UNION SELECT d.refobjid FROM pg_rewrite r
                                 JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                                WHERE r.ev_class = (SELECT oid FROM relation)
                                  AND d.refclassid = 'pg_class'::regclass)
     GROUP BY t.tgrelid
)
SELECT CASE WHEN EXISTS (SELECT 1 FROM noted WHERE every_change) THEN
       md5(:'rules'::text || E'\n' || :'settings'::text || E'\n'
           || (SELECT coalesce(max(version), 0) FROM reconcile.schema_migrations) || E'\n'
           || coalesce((SELECT string_agg(p::text, E'\n' ORDER BY p::text) FROM :products p), ''))
       END AS digest;
