-- The run's due uploads over the size limit are invalid (payload_too_large) from their size
-- alone: never fetched. octet_length reads a TOASTed value's size from its header, without
-- detoasting it.
-- Reads:  reconcile.upload_verifications, :uploads
-- Writes: reconcile.upload_verifications
-- Values: :'run_id' (bigint), :'limit' (integer: VerificationQueue.maximumPayloadBytes).
UPDATE reconcile.upload_verifications v
   SET state = 'invalid', error_code = 'payload_too_large', apple_status = NULL,
       last_error = format('payload is %s bytes, over the %s-byte limit for an upload: rejected unread',
                           octet_length(u.payload), :'limit'::integer),
       attempts = v.attempts + 1, next_attempt_at = NULL, updated_at = now(),
       store = reconcile.upload_store(u.kind)
  FROM :uploads u
 WHERE u.id = v.upload_id AND v.last_run_id = :'run_id'::bigint AND v.state IN ('pending', 'retry')
   AND octet_length(u.payload) > :'limit'::integer;
