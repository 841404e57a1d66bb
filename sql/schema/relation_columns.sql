-- The columns of an input relation, from the catalog: it works for tables and views alike, and
-- the ::regclass cast fails when the relation does not exist.
-- Reads:  the catalog
-- Writes: nothing.
-- Values: :'relation' (regclass: the name a setting gives, such as app.deliveries).
SELECT a.attname FROM pg_attribute a
 WHERE a.attrelid = :'relation'::regclass AND a.attnum > 0 AND NOT a.attisdropped;
