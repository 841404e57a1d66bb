-- The next batch of Google Play subscriptions to ask subscriptionsv2 about again (PlayRenewals):
-- every purchase token of a Play subscription row whose period, as Google last said it, has ended
-- by the run's end (a renewal may have been charged since), or that no run asked about yet; none
-- that is over. Keyset-paged by token.
-- Reads:  reconcile.apple_transactions, reconcile.play_subscriptions
-- Writes: nothing.
-- Values: :'package_names' (text[]), :'until' (timestamptz: the run's end),
--         :'after' (text: the last token of the previous batch, '' for the first), :'limit' (integer).
-- Returns: purchase_token, package_name (one row per token).
SELECT DISTINCT ON (a.purchase_token) a.purchase_token, a.bundle_id
  FROM reconcile.apple_transactions a
  LEFT JOIN reconcile.play_subscriptions s ON s.purchase_token = a.purchase_token
 WHERE a.store = 'google_play' AND a.product_type = 'auto_renewable' AND a.purchase_token IS NOT NULL
   AND a.bundle_id = ANY(:'package_names'::text[])
   AND a.purchase_token > :'after'::text
   AND (s.purchase_token IS NULL OR (NOT s.ended AND (s.expires_at IS NULL OR s.expires_at <= :'until'::timestamptz)))
 ORDER BY a.purchase_token, a.bundle_id
 LIMIT :'limit'::integer;
