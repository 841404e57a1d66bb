-- The report's findings per day of purchase (days since 1970-01-01, UTC; null: undated).
-- Reads:  report_findings
-- Writes: nothing.
-- Values: none.
SELECT floor(extract(epoch FROM purchase_date) / 86400)::bigint AS day, count(*) AS n
  FROM report_findings GROUP BY 1;
