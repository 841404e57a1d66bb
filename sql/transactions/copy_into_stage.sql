-- The batch, loaded into the staging table (stage.sql) by COPY.
-- Reads:  nothing.
-- Writes: stage_transactions
-- Values: none.
COPY stage_transactions FROM STDIN;
