-- A page of voided purchases, loaded into the staging table (stage_voids.sql) by COPY.
-- Reads:  nothing.
-- Writes: stage_play_voids
-- Values: none.
COPY stage_play_voids FROM STDIN;
