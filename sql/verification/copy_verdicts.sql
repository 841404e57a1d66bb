-- A batch's verdicts into the staging table (columns in stage_verdicts.sql's order).
-- Reads:  the rows sent.
-- Writes: stage_verdicts
-- Values: none.
COPY stage_verdicts FROM STDIN;
