-- The seeds (and the transactions a fetched history listed) need no further history: Apple
-- answered, or refused for good.
-- Reads:  reconcile.history_retries
-- Writes: reconcile.history_retries (deleted)
-- Values: :'transaction_ids' (text[]).
DELETE FROM reconcile.history_retries WHERE transaction_id = ANY (:'transaction_ids'::text[]);
