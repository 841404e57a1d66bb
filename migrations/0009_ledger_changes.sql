-- The delivery ledger's changes, for SPEC section 5's "a nightly run judges every delivery that
-- entered or changed in the ledger since the previous run, whatever its delivered_at": a window
-- run scopes deliveries by delivered_at, so a row written after a run but backdated before the
-- next window (a lagging replica, a backfill, a grant made by hand) would otherwise never be judged.
--
-- Statement-level triggers with transition tables append the changed rows' transaction ids in
-- one INSERT … SELECT per statement (a COPY of millions of deliveries stays one statement).
-- changed_xact is the writing transaction's id: a run records the snapshot its diff starts from
-- (reconcile.runs.ledger_change_snapshot); the next run judges every change its writer had not
-- committed by then, and a finished run prunes the changes it saw. A change id alone could not
-- say this: identity values are handed out in the order rows are written, not committed, so a
-- change committed while a run reads would fall behind a mark taken as the highest id, unseen.
CREATE TABLE reconcile.ledger_changes (
    change_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id text NOT NULL,
    changed_xact bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_changes_changed_xact_idx ON reconcile.ledger_changes (changed_xact);

-- The trigger's one argument, if any, names the transaction id column (an operator's own ledger,
-- docs/operations.md); the reference table's is transaction_id. It runs as its owner: whoever writes
-- the ledger needs no grant on reconcile.ledger_changes.
CREATE FUNCTION reconcile.note_ledger_changes() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    xact bigint := pg_current_xact_id()::text::bigint;
    id_column text := coalesce(TG_ARGV[0], 'transaction_id');
BEGIN
    -- No DISTINCT for inserts: a COPY of millions of new deliveries is written through, not
    -- sorted; the scope's UNION folds repeats. An UPDATE may move a delivery to another
    -- transaction: both are judged again.
    EXECUTE format(
        'INSERT INTO reconcile.ledger_changes (transaction_id, changed_xact) '
        'SELECT id, $1 FROM (%s) changed WHERE id IS NOT NULL',
        CASE TG_OP
            WHEN 'INSERT' THEN format('SELECT %I::text AS id FROM new_rows', id_column)
            WHEN 'UPDATE' THEN format('SELECT %1$I::text AS id FROM new_rows UNION SELECT %1$I::text FROM old_rows',
                                      id_column)
            ELSE format('SELECT %I::text AS id FROM old_rows', id_column)
        END) USING xact;
    RETURN NULL;
END $$;

CREATE TRIGGER deliveries_note_inserts AFTER INSERT ON reconcile.deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_ledger_changes();
CREATE TRIGGER deliveries_note_updates AFTER UPDATE ON reconcile.deliveries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_ledger_changes();
CREATE TRIGGER deliveries_note_deletes AFTER DELETE ON reconcile.deliveries
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reconcile.note_ledger_changes();

-- The snapshot the run's diff started from (NULL: the diff did not start, or the run predates
-- this migration): the changes of transactions it shows as committed were in the diff's scope.
ALTER TABLE reconcile.runs ADD COLUMN ledger_change_snapshot pg_snapshot;
