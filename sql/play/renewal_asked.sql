-- Records what subscriptionsv2 said of a subscription (PlayRenewals), once every order up to its
-- latest is in the white table: the latest order, when the period ends, its state, and whether it
-- is over (asked no more).
-- Reads:  reconcile.play_subscriptions
-- Writes: reconcile.play_subscriptions (the token's row)
-- Values: :'purchase_token' (text), :'package_name' (text), :'latest_order_id' (text, or null),
--         :'expires_at' (timestamptz, or null), :'state' (text, or null), :'ended' (boolean),
--         :'run_id' (bigint).
INSERT INTO reconcile.play_subscriptions AS s
       (purchase_token, package_name, latest_order_id, expires_at, state, ended, asked_at, run_id)
VALUES (:'purchase_token'::text, :'package_name'::text, :'latest_order_id'::text, :'expires_at'::timestamptz,
        :'state'::text, :'ended'::boolean, now(), :'run_id'::bigint)
ON CONFLICT (purchase_token) DO UPDATE
   SET package_name = EXCLUDED.package_name, latest_order_id = EXCLUDED.latest_order_id,
       expires_at = EXCLUDED.expires_at, state = EXCLUDED.state, ended = EXCLUDED.ended,
       asked_at = EXCLUDED.asked_at, run_id = EXCLUDED.run_id;
