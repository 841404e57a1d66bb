-- Restores the enable_seqscan that by_index_on.sql replaced.
-- Reads:  nothing.
-- Writes: the transaction's enable_seqscan.
-- Values: :'saved' (text).
SELECT set_config('enable_seqscan', :'saved'::text, true);
