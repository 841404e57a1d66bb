-- Stage: what the receiver's metrics file shows of Google Play's notifications.
-- Reads:  reconcile.play_notifications
-- Writes: nothing
-- Values: none.
-- Returns: kind, state, count (one row per kind and state).
SELECT kind, state, count(*)::float8 AS value
  FROM reconcile.play_notifications
 GROUP BY kind, state
 ORDER BY kind, state;
