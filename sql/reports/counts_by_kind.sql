-- The report's findings and new findings per kind.
-- Reads:  report_findings
-- Writes: nothing.
-- Values: none.
SELECT kind, count(*) AS n, count(*) FILTER (WHERE is_new) AS new FROM report_findings GROUP BY kind;
