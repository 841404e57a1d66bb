-- Stage: scope of a window run (`--since`, or the nightly window after the watermark).
-- Reads:  reconcile.apple_transactions, :deliveries
-- Writes: diff_scope
-- Values: :'since' (timestamptz), :'until' (timestamptz) — the window [since, until).
--
-- The transactions bought in the window and the deliveries made or revoked in it.
INSERT INTO diff_scope (transaction_id)
SELECT transaction_id FROM reconcile.apple_transactions
 WHERE purchase_date >= :'since'::timestamptz AND purchase_date < :'until'::timestamptz
UNION SELECT transaction_id FROM :deliveries
 WHERE delivered_at >= :'since'::timestamptz AND delivered_at < :'until'::timestamptz
UNION SELECT transaction_id FROM :deliveries WHERE revoked_at >= :'since'::timestamptz
ON CONFLICT DO NOTHING;
