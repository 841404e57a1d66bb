-- Bodies the app's endpoint stored over the size limit of a notification, made `invalid`
-- (`payload_too_large`) from their size alone, never fetched: octet_length reads a TOASTed value's
-- size from its header, without detoasting it.
-- Reads:  reconcile.notifications, reconcile.notification_verifications
-- Writes: reconcile.notification_verifications
-- Values: :'run_id' (bigint), :'maximum_body_bytes' (integer).
INSERT INTO reconcile.notification_verifications (notification_id, state, error, run_id)
SELECT n.id, 'invalid',
       format('payload_too_large: the body is %s bytes, over the %s-byte limit for a notification: '
              'rejected unread', octet_length(n.signed_payload), :'maximum_body_bytes'::integer),
       :'run_id'::bigint
  FROM reconcile.notifications n
 WHERE octet_length(n.signed_payload) > :'maximum_body_bytes'::integer
   AND NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                    WHERE v.notification_id = n.id AND v.state <> 'retry')
ON CONFLICT (notification_id) DO UPDATE SET state = 'invalid', error = EXCLUDED.error,
    run_id = EXCLUDED.run_id, updated_at = now();
