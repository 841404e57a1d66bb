-- Records a process's RECONCILE_APPROVAL_ABOVE where it is stricter than the recorded threshold:
-- a currency not recorded is added, a lower limit replaces a higher one, a higher one changes
-- nothing (only an operator raises or removes a limit: approval_clear.sql). Currencies come in
-- order, so two processes recording at once lock their rows in the same order.
-- Reads:  reconcile.approval_thresholds
-- Writes: reconcile.approval_thresholds
-- Values: :'currencies' (text[]: upper-case codes, in order), :'above_millis' (bigint[]: the same
--         order), :'recorded_by' (text: the process).
INSERT INTO reconcile.approval_thresholds AS t (currency, above_milli, recorded_by)
SELECT m.currency, m.above_milli, :'recorded_by'::text
  FROM unnest(:'currencies'::text[], :'above_millis'::bigint[]) AS m (currency, above_milli)
    ON CONFLICT (currency) DO UPDATE
   SET above_milli = excluded.above_milli, recorded_at = now(), recorded_by = excluded.recorded_by
 WHERE excluded.above_milli < t.above_milli;
