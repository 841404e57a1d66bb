-- Stops the claims' trigger (migrations 0011, 0013) while the generated claims are loaded: the
-- white rows were written with their claims' facts, and it would write millions of rows again.
-- Reads:  nothing.
-- Writes: reconcile.transaction_claims (its trigger disabled)
-- Values: none.
ALTER TABLE reconcile.transaction_claims DISABLE TRIGGER transaction_claims_note_inserts;
