-- Drops report_findings once the report is written.
-- Reads:  nothing.
-- Writes: report_findings (dropped)
-- Values: none.
DROP TABLE IF EXISTS report_findings;
