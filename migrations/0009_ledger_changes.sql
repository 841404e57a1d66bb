-- The delivery ledger's changes, for SPEC section 5's "a nightly run judges every delivery that
-- entered or changed in the ledger since the previous run, whatever its delivered_at": a window
-- run scopes deliveries by delivered_at, so a row written after a run but backdated before the
-- next window (a lagging replica, a backfill, a grant made by hand) would otherwise never be judged.
--
-- Statement-level triggers with transition tables append the changed rows' transaction ids in
-- one INSERT … SELECT per statement (a COPY of millions of deliveries stays one statement).
-- changed_xact is the writing transaction's id: a run records the oldest transaction still in
-- progress when its diff starts (reconcile.runs.ledger_change_mark), and the next run judges
-- every change of a transaction at or after that mark. A change id alone could not say this:
-- identity values are handed out in the order rows are written, not committed, so a change
-- committed while a run reads would fall behind the run's mark unseen. A finished run prunes the
-- changes below its own mark (it saw them all).
CREATE TABLE reconcile.ledger_changes (
    change_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id text NOT NULL,
    changed_xact bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_changes_changed_xact_idx ON reconcile.ledger_changes (changed_xact);

CREATE FUNCTION reconcile.note_ledger_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    xact bigint := pg_current_xact_id()::text::bigint;
BEGIN
    -- No DISTINCT for inserts: a COPY of millions of new deliveries is written through, not
    -- sorted; the scope's UNION folds repeats.
    IF TG_OP = 'INSERT' THEN
        INSERT INTO reconcile.ledger_changes (transaction_id, changed_xact)
        SELECT transaction_id, xact FROM new_rows WHERE transaction_id IS NOT NULL;
    ELSIF TG_OP = 'UPDATE' THEN
        -- An UPDATE may move a delivery to another transaction: both are judged again.
        INSERT INTO reconcile.ledger_changes (transaction_id, changed_xact)
        SELECT transaction_id, xact FROM (SELECT transaction_id FROM new_rows
                                          UNION SELECT transaction_id FROM old_rows) changed
         WHERE transaction_id IS NOT NULL;
    ELSE
        INSERT INTO reconcile.ledger_changes (transaction_id, changed_xact)
        SELECT transaction_id, xact FROM old_rows WHERE transaction_id IS NOT NULL;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER deliveries_note_inserts AFTER INSERT ON reconcile.deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_ledger_changes();
CREATE TRIGGER deliveries_note_updates AFTER UPDATE ON reconcile.deliveries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_ledger_changes();
CREATE TRIGGER deliveries_note_deletes AFTER DELETE ON reconcile.deliveries
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_ledger_changes();

-- The oldest transaction in progress when the run's diff started (NULL: the diff did not start,
-- or the run predates this migration).
ALTER TABLE reconcile.runs ADD COLUMN ledger_change_mark bigint;
