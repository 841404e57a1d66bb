-- The rows a run rendered for the report_rows cache (ReportRowCache), staged for rows_store.sql.
-- Reads:  nothing.
-- Writes: report_rows_staged (dropped at commit)
-- Values: none.
CREATE TEMP TABLE report_rows_staged (
    review_item_id bigint NOT NULL, judged_run bigint NOT NULL, json text NOT NULL, markdown text NOT NULL,
    html text NOT NULL, csv text NOT NULL
) ON COMMIT DROP;
