-- Issue 39 (SPEC section 19): the trends of the Insights page and report.html. Each finished run
-- keeps, beside its counts, what the trend charts draw and nothing else keeps per night: the open
-- items' value at risk per currency at the run's end, Google Play's purchases refunded for want of
-- an acknowledgement, and the refund requests it saw answered, refunded and declined.
-- `{"value_at_risk": {"CNY": 6480000}, "voided_unacknowledged": 1,
--   "refund_requests": {"answered": 3, "refunded": 1, "declined": 2}}`; '{}' for runs before it.
ALTER TABLE reconcile.runs ADD COLUMN trends jsonb NOT NULL DEFAULT '{}';

-- The findings each night opened, read by the trends (and by the alert check's new high findings).
CREATE INDEX review_items_first_seen_run_idx ON reconcile.review_items (first_seen_run);
