-- Finding: unverified_delivery (high, investigate) — a delivery whose transaction no verified
-- source of this app contains, judged once the delivery's account has nothing left to verify
-- and, with the store's API configured, after it answered not found (Apple's Get Transaction Info
-- in both environments; Google's Orders API). A Google Play delivery is judged only while Play is
-- on (GOOGLE_PLAY_PACKAGE_NAMES set).
-- Reads:  diff_dl, diff_tx, diff_blocked, diff_pending_users, reconcile.transaction_lookups, :products
-- Writes: diff_findings (fingerprint unverified_delivery:<transaction>:<md5 of the account>;
--         user_id: the delivery's account; amount: the catalogue price of what was delivered;
--         held by the delivery's account: judged only once it has nothing left to verify)
-- Values: :'judge_before' (timestamptz),
--         :'stores_on' (text[]: the stores the settings configure), :'api_stores' (text[]: the
--         stores whose API is configured, whose answer "not found" the finding waits for).
INSERT INTO diff_findings (fingerprint, kind, transaction_id, user_id, product_id, amount_milli, currency,
                           held_by_user_id)
SELECT 'unverified_delivery:' || d.transaction_id || ':' || md5(d.user_id) AS fingerprint,
       'unverified_delivery' AS kind, d.transaction_id, d.user_id, min(d.product_id) AS product_id,
       sum(p.price_milli * d.quantity) AS amount_milli, min(p.currency) AS currency, d.user_id AS held_by_user_id
  FROM diff_dl d LEFT JOIN :products p ON p.product_id = d.product_id
 WHERE d.revoked_at IS NULL AND d.delivered_at <= :'judge_before'::timestamptz
   AND NOT EXISTS (SELECT 1 FROM diff_tx t WHERE t.transaction_id = d.transaction_id AND t.bundle_ok)
   AND NOT EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = d.transaction_id)
   AND NOT EXISTS (SELECT 1 FROM diff_pending_users q WHERE q.user_id = d.user_id)
   AND d.store = ANY (:'stores_on'::text[])
   AND (NOT d.store = ANY (:'api_stores'::text[])
        OR EXISTS (SELECT 1 FROM reconcile.transaction_lookups l
                    WHERE l.transaction_id = d.transaction_id AND l.result = 'not_found'))
 GROUP BY d.transaction_id, d.user_id;
