-- The acknowledgement rescue's candidates (SPEC section 18), one batch: the purchase tokens of
-- Google Play rows still unacknowledged, paid (not pending, not revoked in full) and not yet settled
-- by an earlier rescue (reconcile.play_acknowledgements), in token order after :'after'.
-- Reads:  reconcile.apple_transactions, reconcile.play_acknowledgements, :products
-- Writes: nothing.
-- Values: :'after' (text: the last token of the previous batch, '' for the first),
--         :'batch' (integer: how many tokens), :'packages' (text[]: GOOGLE_PLAY_PACKAGE_NAMES).
-- Returns: purchase_token, package_name, product_id (the earliest order's), subscription (a
--          subscription's token, acknowledged by purchases.subscriptions.acknowledge),
--          transaction_ids (a JSON array: the token's unacknowledged orders, for the diff to judge whether the
--          ledger delivered them to their buyer).
--
-- A row whose source does not say (acknowledged null: a purchaseData without the field) is asked
-- too: Google's answer decides, never the row.
SELECT a.purchase_token,
       (array_agg(a.bundle_id ORDER BY a.purchase_date, a.transaction_id))[1] AS package_name,
       (array_agg(a.product_id ORDER BY a.purchase_date, a.transaction_id))[1] AS product_id,
       bool_or(coalesce(a.product_type, p.product_type) = 'auto_renewable') AS subscription,
       array_to_json(array_agg(a.transaction_id ORDER BY a.purchase_date, a.transaction_id)) AS transaction_ids
  FROM reconcile.apple_transactions a
  LEFT JOIN :products p ON p.product_id = a.product_id
 WHERE a.store = 'google_play' AND a.acknowledged IS NOT TRUE AND NOT a.pending
   AND (a.revocation_date IS NULL OR a.refunded_quantity < a.quantity)
   AND a.purchase_token > :'after'::text AND a.bundle_id = ANY (:'packages'::text[])
   AND NOT EXISTS (SELECT 1 FROM reconcile.play_acknowledgements k WHERE k.purchase_token = a.purchase_token)
 GROUP BY a.purchase_token
 ORDER BY a.purchase_token
 LIMIT :'batch'::integer;
