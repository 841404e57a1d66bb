-- Why a stored Notification History body did not verify.
-- Reads:  nothing.
-- Writes: reconcile.notification_history
-- Values: :'id' (bigint), :'error' (text).
UPDATE reconcile.notification_history SET error = :'error'::text WHERE id = :'id'::bigint;
