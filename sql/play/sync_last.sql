-- How far a package's voided-purchases list has been read (PlayVoidSync): the next read starts
-- there minus an overlap; none for a package never read.
-- Reads:  reconcile.play_voided_sync
-- Writes: nothing.
-- Values: :'package_name' (text).
-- Returns: synced_until (at most one row).
SELECT synced_until FROM reconcile.play_voided_sync WHERE package_name = :'package_name'::text;
