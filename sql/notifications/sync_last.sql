-- Where the last completed Notification History sync of an environment ended.
-- Reads:  reconcile.notification_syncs
-- Writes: nothing.
-- Values: :'environment' (text: Production or Sandbox).
SELECT max(until) FROM reconcile.notification_syncs WHERE status = 'completed' AND environment = :'environment'::text;
