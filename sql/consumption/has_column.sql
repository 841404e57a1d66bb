-- Whether a relation (a table or a view) has a column, read from the catalogue.
-- Reads:  pg_attribute
-- Writes: nothing.
-- Values: :'relation' (text: the quoted name), :'column' (text).
SELECT 1 FROM pg_attribute
 WHERE attrelid = to_regclass(:'relation'::text) AND attname = :'column'::text AND NOT attisdropped;
