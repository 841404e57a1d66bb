-- Leases the transaction a refund request is about to this answerer (SPEC section 14: one answer
-- per transaction), if no other process holds it or its lease ran out. One statement, committed
-- at once: Apple is called with no transaction open, and the outcome recorded after
-- (record_outcome.sql). Two processes claiming at once: the second waits for the first's insert,
-- then finds the lease held and gets no row; it leaves the request for a later pass.
-- Reads:  reconcile.consumption_leases
-- Writes: reconcile.consumption_leases
-- Values: :'transaction_id' (text), :'holder' (uuid: this claim's id), :'held_by' (text),
--         :'lease_seconds' (double precision).
INSERT INTO reconcile.consumption_leases AS l (transaction_id, holder, held_by, leased_until)
VALUES (:'transaction_id'::text, :'holder'::uuid, :'held_by'::text,
        now() + make_interval(secs => :'lease_seconds'::double precision))
ON CONFLICT (transaction_id) DO UPDATE
   SET holder = excluded.holder, held_by = excluded.held_by, taken_at = now(), leased_until = excluded.leased_until
 WHERE l.leased_until <= now()
RETURNING l.holder;
