-- Apple re-sends a request it is still waiting on with a new UUID: it joins the open answer.
-- Reads:  nothing.
-- Writes: reconcile.consumption_answers
-- Values: :'transaction_id' (text), :'uuid' (uuid).
UPDATE reconcile.consumption_answers SET request_uuids = request_uuids || :'uuid'::uuid, updated_at = now()
 WHERE transaction_id = :'transaction_id'::text AND status = 'answered' AND outcome IS NULL;
