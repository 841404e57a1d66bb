-- Gives back a lease this answerer took (claim_lease.sql), once its outcome is recorded or it
-- sent nothing; a lease another process took after this one's ran out is left to it.
-- Reads:  nothing.
-- Writes: reconcile.consumption_leases
-- Values: :'transaction_id' (text), :'holder' (uuid).
DELETE FROM reconcile.consumption_leases WHERE transaction_id = :'transaction_id'::text AND holder = :'holder'::uuid;
