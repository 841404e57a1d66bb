-- Serialises one policy rule's decisions across every process until the transaction ends: its
-- limits are counted (counts.sql) and its decision written under this lock, so two runs, or a run
-- and the notification receiver, deciding at once cannot both take the last place under a limit.
-- Taken after the item's row lock, by every decider in that order.
-- Reads:  nothing.
-- Writes: nothing (takes a transaction-level advisory lock in the two-key space, apart from the
--         run lock's one-key space).
-- Values: :'lock_class' (integer: Schema.LockKey.policyClass), :'actor' (text: policy:<name>).
SELECT pg_advisory_xact_lock(:'lock_class'::integer, hashtext(:'actor'::text));
