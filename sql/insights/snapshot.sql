-- Stage: snapshot — the insights' transaction: every dimension's statement reads one snapshot,
-- so that a run finishing meanwhile cannot make one table disagree with another or with the
-- overall counts; read only; without JIT, which compiles for half a second whenever a statement
-- over the whole history looks big and gains nothing back here (as in sql/diff/00_session.sql).
-- Call first in the transaction.
-- Reads:  nothing.
-- Writes: transaction_isolation, transaction_read_only, jit (for the transaction).
-- Values: none.
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;
SELECT set_config('jit', 'off', true) AS jit;
