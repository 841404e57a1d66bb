-- The next batch of the export's cursor (export_open.sql); an empty batch ends it.
-- Reads:  the cursor review_export.
-- Writes: nothing.
-- Values: none.
FETCH 1000 FROM review_export;
