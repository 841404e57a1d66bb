-- One process at a time answers refund requests about a transaction (the receiver's worker,
-- `reconcile notifications sync` and a run's sync stage all answer): takes, if nobody holds it, a
-- transaction-level advisory lock in the two-key space, apart from the run lock's one-key space
-- and from the policies' class. Held across Apple's call until the answer is recorded; a process
-- that does not get it leaves the request for a later pass, neither sending nor recording.
-- Reads:  nothing.
-- Writes: nothing (takes a transaction-level advisory lock).
-- Values: :'lock_class' (integer: Schema.LockKey.consumptionClass), :'transaction_id' (text).
SELECT pg_try_advisory_xact_lock(:'lock_class'::integer, hashtext(:'transaction_id'::text));
