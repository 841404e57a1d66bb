-- Stage: evidence — what a person needs to judge each finding (the shape of `Evidence` in
-- Swift): the Apple transaction, the ledger rows of its key, the uploads with device and
-- verification state, and how the buyer was resolved; and what the finding's rule adds
-- (extra_evidence: refunded_delivery's refunded units, say).
-- Reads:  diff_findings, diff_tx, diff_key, diff_buyer, reconcile.apple_transactions,
--         reconcile.transaction_claims, reconcile.upload_verifications, :deliveries, :uploads
-- Writes: diff_findings.evidence
-- Values: none.
ANALYZE diff_findings;

UPDATE diff_findings f SET evidence = jsonb_build_object(
    'apple_transaction', (SELECT to_jsonb(a) FROM reconcile.apple_transactions a
                           WHERE a.transaction_id = f.transaction_id),
    'deliveries', coalesce((SELECT jsonb_agg(to_jsonb(d) ORDER BY d.id) FROM :deliveries d
                             WHERE d.transaction_id IN (SELECT f.transaction_id
                                                        UNION SELECT t.transaction_id FROM diff_tx t
                                                         WHERE t.match_key = f.match_key)), '[]'),
    'uploads', coalesce((SELECT jsonb_agg(jsonb_build_object(
                            'id', u.id, 'user_id', u.user_id, 'kind', u.kind, 'uploaded_at', u.uploaded_at,
                            'device', u.device, 'application_username', u.application_username,
                            'app_account_token', u.app_account_token,
                            'claimed_transaction_id', u.claimed_transaction_id,
                            'verification', v.state, 'apple_status', v.apple_status,
                            'error', v.last_error, 'environment', v.environment, 'bundle_id', v.bundle_id)
                            ORDER BY u.id)
                          FROM :uploads u
                          LEFT JOIN reconcile.upload_verifications v ON v.upload_id = u.id
                         WHERE u.id IN (SELECT c.upload_id FROM reconcile.transaction_claims c
                                         WHERE c.transaction_id = f.transaction_id
                                           AND c.source <> 'server_api'
                                        UNION SELECT u2.id FROM :uploads u2
                                         WHERE u2.claimed_transaction_id = f.transaction_id
                                        UNION SELECT f.upload_id)), '[]'),
    'buyer', (SELECT jsonb_build_object('user_id', b.buyer, 'basis', b.basis, 'uploaders', b.uploaders)
                FROM diff_buyer b WHERE b.transaction_id = f.transaction_id)
) || coalesce(f.extra_evidence, '{}');
