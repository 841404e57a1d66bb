-- The value of the report's findings per kind and currency (thousandths of the currency's unit).
-- Reads:  report_findings
-- Writes: nothing.
-- Values: none.
SELECT kind, currency, sum(amount_milli)::bigint AS amount FROM report_findings
 WHERE amount_milli IS NOT NULL AND currency IS NOT NULL GROUP BY kind, currency;
