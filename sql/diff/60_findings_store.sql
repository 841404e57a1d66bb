-- Stage: findings' store — which store each finding is about (SPEC section 18), and a Google
-- Play finding's fingerprint marked as Play's, so that it never equals an App Store one.
-- Reads:  diff_findings, diff_tx, diff_dl, reconcile.upload_verifications
-- Writes: diff_findings.store, diff_findings.fingerprint (`google_play/<kind>:…` for Play)
-- Values: none.
--
-- A finding about an upload (foreign_bundle) is its upload's store's; any other its transaction's,
-- or, when no store confirmed the transaction (unverified_delivery), its ledger rows'. Every
-- finding starts as the App Store's (50_findings_table.sql): only Play's rows are written, so a
-- store with nothing to say costs one read of the findings.
UPDATE diff_findings f SET store = 'google_play', fingerprint = 'google_play/' || f.fingerprint
 WHERE CASE WHEN f.upload_id IS NOT NULL
            THEN EXISTS (SELECT 1 FROM reconcile.upload_verifications v
                          WHERE v.upload_id = f.upload_id AND v.store = 'google_play')
            WHEN EXISTS (SELECT 1 FROM diff_tx t WHERE t.transaction_id = f.transaction_id)
            THEN EXISTS (SELECT 1 FROM diff_tx t WHERE t.transaction_id = f.transaction_id AND t.store = 'google_play')
            ELSE EXISTS (SELECT 1 FROM diff_dl d WHERE d.transaction_id = f.transaction_id AND d.store = 'google_play')
       END;
