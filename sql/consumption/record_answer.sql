-- What the job did with a refund request: answered (with the body Apple got), failed, or expired.
-- Reads:  nothing.
-- Writes: reconcile.consumption_answers
-- Values: :'transaction_id' (text), :'environment' (text), :'user_id' (text, null), :'uuid' (uuid),
--         :'requested_at' (timestamptz), :'status' (text), :'body' (text, null: JSON),
--         :'http' (integer, null), :'error' (text, null).
INSERT INTO reconcile.consumption_answers
    (transaction_id, environment, user_id, request_uuids, requested_at, status, body, apple_http_status, apple_error)
VALUES (:'transaction_id'::text, :'environment'::text, :'user_id'::text, ARRAY[:'uuid'::uuid],
        :'requested_at'::timestamptz, :'status'::text, :'body'::jsonb, :'http'::integer, :'error'::text);
