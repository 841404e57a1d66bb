-- Moves a package's voided-list watermark to the end of the window just read, in the transaction
-- that records the window's last page (PlayVoidSync): a crash before it commits leaves the
-- watermark where it was, and the next read starts from there again. Never moves it back.
-- Reads:  reconcile.play_voided_sync
-- Writes: reconcile.play_voided_sync (the package's row)
-- Values: :'package_name' (text), :'synced_until' (timestamptz: the window's endTime),
--         :'run_id' (bigint: the run, or the sync's lookup run, that read it).
INSERT INTO reconcile.play_voided_sync AS s (package_name, synced_until, synced_at, run_id)
VALUES (:'package_name'::text, :'synced_until'::timestamptz, now(), :'run_id'::bigint)
ON CONFLICT (package_name) DO UPDATE
   SET synced_until = greatest(s.synced_until, EXCLUDED.synced_until), synced_at = now(), run_id = EXCLUDED.run_id;
