-- A Notification History sync ends, with what it fetched and stored.
-- Reads:  nothing.
-- Writes: reconcile.notification_syncs
-- Values: :'id' (bigint), :'status' (text: completed or failed), :'pages' (integer), :'fetched' (integer),
--         :'stored' (integer), :'undelivered' (integer), :'error' (text, null).
UPDATE reconcile.notification_syncs
   SET status = :'status'::text, pages = :'pages'::integer, fetched = :'fetched'::integer,
       stored = :'stored'::integer, undelivered = :'undelivered'::integer, error = :'error'::text,
       finished_at = now()
 WHERE id = :'id'::bigint;
