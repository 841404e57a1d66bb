-- One notification of Get Notification History, stored once per body (by its SHA-256) as
-- `invalid` until it verifies; a body fetched again only refreshes Apple's send attempts.
-- Returns: id, inserted (false for a body stored before).
-- Reads:  reconcile.notification_history
-- Writes: reconcile.notification_history
-- Values: :'payload' (text), :'send_attempts' (text: a JSON array), :'last_send_result' (text, null),
--         :'sync_id' (bigint), :'run_id' (bigint, null).
INSERT INTO reconcile.notification_history AS h
    (payload_sha256, signed_payload, send_attempts, last_send_result, state, sync_id, run_id)
VALUES (encode(sha256(convert_to(:'payload'::text, 'UTF8')), 'hex'), :'payload'::text, :'send_attempts'::jsonb,
        :'last_send_result'::text, 'invalid', :'sync_id'::bigint, :'run_id'::bigint)
ON CONFLICT (payload_sha256) DO UPDATE
   SET send_attempts = EXCLUDED.send_attempts, last_send_result = EXCLUDED.last_send_result,
       last_fetched_at = now()
RETURNING h.id, (xmax = 0) AS inserted;
