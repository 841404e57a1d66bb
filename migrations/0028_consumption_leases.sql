-- Issue 36 item 9 (SPEC sections 14 and 16): an answer to a refund request is claimed, sent and
-- recorded as the outbox's delivery is: a process leases the transaction Apple asks about in a
-- statement committed at once, calls Apple with no database transaction open (a transaction held
-- across Apple's call was ended by idle_in_transaction_session_timeout, and the answer sent was
-- never recorded), then records the outcome and gives the lease back. While the lease lasts no
-- other process (the receiver, the hourly sync, a nightly run) answers about that transaction; a
-- lease left by a process that died runs out and the request is taken again.
CREATE TABLE reconcile.consumption_leases (
    -- One answer per transaction until Apple decides: the lease is per transaction, not per request.
    transaction_id text PRIMARY KEY,
    -- The claim's own id: only the process that took the lease records under it or gives it back.
    holder uuid NOT NULL,
    -- Who holds it (host:pid and what it is), for an operator.
    held_by text NOT NULL,
    taken_at timestamptz NOT NULL DEFAULT now(),
    -- Longer than one call to Apple with every retry (ConsumptionAnswerer.lease).
    leased_until timestamptz NOT NULL
);
