-- Starts the claims' trigger again after the generated claims were loaded (claims_trigger_off.sql).
-- Reads:  nothing.
-- Writes: reconcile.transaction_claims (its trigger enabled)
-- Values: none.
ALTER TABLE reconcile.transaction_claims ENABLE TRIGGER transaction_claims_note_inserts;
