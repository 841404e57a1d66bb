-- Loads the rendered rows into the staging table (rows_stage.sql).
-- Reads:  nothing.
-- Writes: report_rows_staged
-- Values: none.
COPY report_rows_staged (review_item_id, judged_run, json, markdown, html, csv) FROM STDIN;
