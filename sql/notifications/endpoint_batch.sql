-- The next stored notifications to verify (by id, after :'after'): up to :'batch_size' bodies and
-- :'maximum_batch_bytes' of them (at least one body), so memory stays flat whatever the table
-- holds. Sizes are read before any body is; a body too large that arrived meanwhile waits for the
-- next run (reject_oversized.sql).
-- Reads:  reconcile.notifications, reconcile.notification_verifications
-- Writes: nothing.
-- Values: :'after' (bigint), :'batch_size' (integer), :'maximum_batch_bytes' (bigint),
--         :'maximum_body_bytes' (integer).
WITH due AS (
    SELECT n.id, sum(n.bytes) OVER (ORDER BY n.id) AS running_bytes,
           row_number() OVER (ORDER BY n.id) AS position
      FROM (SELECT n.id, octet_length(n.signed_payload) AS bytes FROM reconcile.notifications n
             WHERE n.id > :'after'::bigint AND octet_length(n.signed_payload) <= :'maximum_body_bytes'::integer
               AND NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                                WHERE v.notification_id = n.id AND v.state <> 'retry')
             ORDER BY n.id LIMIT :'batch_size'::integer) n
)
SELECT n.id, n.signed_payload FROM due d JOIN reconcile.notifications n ON n.id = d.id
 WHERE d.position = 1 OR d.running_bytes <= :'maximum_batch_bytes'::bigint
 ORDER BY n.id;
