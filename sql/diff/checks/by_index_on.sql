-- Prices sequential scans out for the next step (until by_index_off.sql or the transaction's
-- end); returns the setting it replaced.
-- Reads:  nothing.
-- Writes: the transaction's enable_seqscan.
-- Values: none.
SELECT current_setting('enable_seqscan') AS saved, set_config('enable_seqscan', 'off', true);
