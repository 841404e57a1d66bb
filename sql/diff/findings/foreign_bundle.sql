-- Finding: foreign_bundle (medium, investigate) — an upload's receipt, transaction or Play purchase
-- belongs to another app (a bundle, or a package, its store's setting does not name).
-- Reads:  diff_scope_uploads, reconcile.upload_verifications, reconcile.transaction_claims, :uploads
-- Writes: diff_findings (fingerprint foreign_bundle:<upload id>; transaction_id: the one the
--         upload claimed, else the least it carried; user_id: the uploader)
-- Values: :'accepted_apps' (text[]: `store/app`, reconcile.app_accepted), :'stores_on' (text[]: the
--         stores the settings configure; an upload of a store turned off is not judged).
INSERT INTO diff_findings (fingerprint, kind, transaction_id, user_id, upload_id)
SELECT 'foreign_bundle:' || v.upload_id AS fingerprint, 'foreign_bundle' AS kind,
       coalesce(u.claimed_transaction_id,
                (SELECT min(c.transaction_id) FROM reconcile.transaction_claims c
                  WHERE c.upload_id = v.upload_id)) AS transaction_id,
       u.user_id, v.upload_id
  FROM reconcile.upload_verifications v JOIN :uploads u ON u.id = v.upload_id
 WHERE v.state = 'verified' AND v.bundle_id IS NOT NULL
   AND NOT reconcile.app_accepted(v.store, v.bundle_id, :'accepted_apps'::text[])
   AND v.store = ANY (:'stores_on'::text[])
   AND v.upload_id IN (SELECT upload_id FROM diff_scope_uploads);
