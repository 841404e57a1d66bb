-- Whether an answer already takes a refund request into account: read again under the lock
-- (lock_transaction.sql), since another process may have answered it after this one read it
-- pending (pending_requests.sql).
-- Reads:  reconcile.consumption_answers
-- Writes: nothing.
-- Values: :'uuid' (uuid).
SELECT 1 FROM reconcile.consumption_answers WHERE request_uuids @> ARRAY[:'uuid'::uuid];
