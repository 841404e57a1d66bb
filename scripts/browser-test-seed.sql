-- A small review queue for scripts/browser-test: every kind once, realistic evidence, and a user
-- id that tries to run script in the page. Applied to a fresh, migrated database.
INSERT INTO reconcile.runs (window_since, window_until, environment, status, started_at, finished_at, uploads_total,
                            uploads_verified, findings_total, findings_new)
VALUES (now() - interval '3 days', now() - interval '1 day', 'production', 'completed', now() - interval '1 day',
        now() - interval '1 day' + interval '3 minutes', 1840, 1838, 9, 9),
       (now() - interval '1 day', now(), 'production', 'completed_with_unresolved', now() - interval '10 minutes',
        now() - interval '7 minutes', 2210, 2201, 11, 2);

CREATE FUNCTION pg_temp.apple(tx text, product text, quantity int, price bigint, environment text DEFAULT 'Production')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('transaction_id', tx, 'original_transaction_id', tx, 'product_id', product,
        'product_type', 'consumable', 'quantity', quantity, 'purchase_date', now() - interval '2 days',
        'environment', environment, 'bundle_id', 'com.example.dragons', 'price_milli', price, 'currency', 'CNY',
        'storefront', 'CHN', 'ownership_type', 'PURCHASED', 'source', 'verify_receipt')
$$;
CREATE FUNCTION pg_temp.delivery(id int, tx text, usr text, product text, quantity int DEFAULT 1) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object('id', id, 'transaction_id', tx, 'user_id', usr, 'product_id', product,
        'quantity', quantity, 'delivered_at', now() - interval '2 days' + interval '40 seconds', 'revoked_at', NULL)
$$;
CREATE FUNCTION pg_temp.upload(id int, usr text, model text, os text, app text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('id', id, 'user_id', usr, 'kind', 'app_receipt',
        'uploaded_at', now() - interval '2 days' + interval '20 seconds',
        'device', jsonb_build_object('model', model, 'os_version', os, 'app_version', app),
        'verification', 'verified', 'apple_status', 0, 'error', NULL)
$$;

INSERT INTO reconcile.review_items
    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
     suggested_action, evidence, first_seen_run, last_seen_run)
VALUES
('missed_delivery:2000000111111111', 'missed_delivery', 'high', 'open', '2000000111111111', '2000000111111111',
 '<script>alert(1)</script>', 'coins_600', 'grant',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000111111111', 'coins_600', 1, 6000), 'deliveries', '[]'::jsonb,
   'uploads', jsonb_build_array(pg_temp.upload(501, '<script>alert(1)</script>', 'iPhone15,2', '17.4', '5.2.0')),
   'buyer', jsonb_build_object('user_id', '<script>alert(1)</script>', 'basis', 'uploader', 'uploaders', 1)), 1, 2),
('missed_delivery:2000000222222222', 'missed_delivery', 'high', 'open', '2000000222222222', '2000000222222222',
 'player-42', 'coins_600', 'grant',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000222222222', 'coins_600', 1, 6000), 'deliveries', '[]'::jsonb,
   'uploads', jsonb_build_array(pg_temp.upload(502, 'player-42', 'iPhone14,5', '17.2', '5.1.3')),
   'buyer', jsonb_build_object('user_id', 'player-42', 'basis', 'app_account_token', 'uploaders', 1)), 1, 2),
('wrong_account:2000000333333333:' || md5('player-12'), 'wrong_account', 'high', 'open', '2000000333333333',
 '2000000333333333', 'player-77', 'vip_month', 'move',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000333333333', 'vip_month', 1, 30000),
   'deliveries', jsonb_build_array(pg_temp.delivery(9001, '2000000333333333', 'player-12', 'vip_month')),
   'uploads', jsonb_build_array(pg_temp.upload(503, 'player-12', 'iPad13,18', '17.1', '5.2.0')),
   'buyer', jsonb_build_object('user_id', 'player-77', 'basis', 'application_username', 'uploaders', 1)), 1, 2),
('duplicate_delivery:2000000444444444', 'duplicate_delivery', 'medium', 'open', '2000000444444444', '2000000444444444',
 'player-5', 'gems_6480', 'revoke',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000444444444', 'gems_6480', 1, 648000),
   'deliveries', jsonb_build_array(pg_temp.delivery(9002, '2000000444444444', 'player-5', 'gems_6480'),
                                   pg_temp.delivery(9003, '2000000444444444', 'player-5', 'gems_6480')),
   'uploads', jsonb_build_array(pg_temp.upload(504, 'player-5', 'iPhone13,2', '16.7', '5.0.1')),
   'buyer', jsonb_build_object('user_id', 'player-5', 'basis', 'uploader', 'uploaders', 1)), 2, 2),
('refunded_delivery:2000000555555555', 'refunded_delivery', 'medium', 'open', '2000000555555555', '2000000555555555',
 'player-9', 'coins_600', 'revoke',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000555555555', 'coins_600', 1, 6000)
                      || jsonb_build_object('revocation_date', now() - interval '1 day', 'revocation_reason', 0),
   'deliveries', jsonb_build_array(pg_temp.delivery(9004, '2000000555555555', 'player-9', 'coins_600')),
   'uploads', jsonb_build_array(pg_temp.upload(505, 'player-9', 'iPhone12,1', '17.0', '5.1.0')),
   'buyer', jsonb_build_object('user_id', 'player-9', 'basis', 'uploader', 'uploaders', 1)), 1, 2),
('unverified_delivery:2000000666666666:' || md5('player-3'), 'unverified_delivery', 'high', 'open', '2000000666666666',
 NULL, 'player-3', 'gems_6480', 'investigate',
 jsonb_build_object('apple_transaction', NULL,
   'deliveries', jsonb_build_array(pg_temp.delivery(9005, '2000000666666666', 'player-3', 'gems_6480')),
   'uploads', '[]'::jsonb, 'buyer', NULL), 2, 2),
('product_mismatch:2000000777777777:9006', 'product_mismatch', 'medium', 'open', '2000000777777777', '2000000777777777',
 'player-8', 'coins_600', 'investigate',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000777777777', 'coins_600', 1, 6000),
   'deliveries', jsonb_build_array(pg_temp.delivery(9006, '2000000777777777', 'player-8', 'gems_6480')),
   'uploads', jsonb_build_array(pg_temp.upload(507, 'player-8', 'iPhone15,3', '17.4', '5.2.0')),
   'buyer', jsonb_build_object('user_id', 'player-8', 'basis', 'uploader', 'uploaders', 1)), 1, 2),
('quantity_mismatch:2000000888888888', 'quantity_mismatch', 'medium', 'open', '2000000888888888', '2000000888888888',
 'player-21', 'coins_600', 'investigate',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000888888888', 'coins_600', 2, 6000),
   'deliveries', jsonb_build_array(pg_temp.delivery(9007, '2000000888888888', 'player-21', 'coins_600', 1)),
   'uploads', jsonb_build_array(pg_temp.upload(508, 'player-21', 'iPhone14,2', '17.3', '5.2.0')),
   'buyer', jsonb_build_object('user_id', 'player-21', 'basis', 'uploader', 'uploaders', 1)), 1, 2),
('shared_receipt:2000000999999999', 'shared_receipt', 'medium', 'open', '2000000999999999', '2000000999999999',
 NULL, 'vip_month', 'investigate',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000999999999', 'vip_month', 1, 30000),
   'deliveries', jsonb_build_array(pg_temp.delivery(9008, '2000000999999999', 'player-30', 'vip_month')),
   'uploads', jsonb_build_array(pg_temp.upload(509, 'player-30', 'iPhone11,8', '16.5', '4.9.0'),
                                pg_temp.upload(510, 'player-31', 'iPhone12,8', '17.2', '5.2.0')),
   'buyer', jsonb_build_object('user_id', NULL, 'basis', NULL, 'uploaders', 2)), 2, 2),
('environment_mismatch:2000001000000000', 'environment_mismatch', 'low', 'open', '2000001000000000', '2000001000000000',
 'qa-tester', 'coins_600', 'investigate',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000001000000000', 'coins_600', 1, 6000, 'Sandbox'),
   'deliveries', jsonb_build_array(pg_temp.delivery(9009, '2000001000000000', 'qa-tester', 'coins_600')),
   'uploads', jsonb_build_array(pg_temp.upload(511, 'qa-tester', 'iPhone16,1', '18.0', '5.3.0-beta')),
   'buyer', jsonb_build_object('user_id', 'qa-tester', 'basis', 'uploader', 'uploaders', 1)), 1, 2),
('missed_delivery:2000000123123123', 'missed_delivery', 'high', 'auto_resolved', '2000000123123123', '2000000123123123',
 'player-2', 'coins_600', 'grant',
 jsonb_build_object('apple_transaction', pg_temp.apple('2000000123123123', 'coins_600', 1, 6000), 'deliveries', '[]'::jsonb,
   'uploads', '[]'::jsonb, 'buyer', jsonb_build_object('user_id', 'player-2', 'basis', 'uploader', 'uploaders', 1)), 1, 1);

INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note, created_at)
SELECT id, first_seen_run, 'reconcile', NULL, 'open', 'detected', created_at FROM reconcile.review_items;
INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
SELECT id, 2, 'reconcile', 'open', 'auto_resolved', 'condition no longer detected'
  FROM reconcile.review_items WHERE status = 'auto_resolved';

-- Combining characters: a `<` after U+0600 (a prefix character) and a `"` before U+0301 (a
-- combining mark) each share a grapheme cluster with their neighbour, which a per-character
-- escaper lets through unescaped. The pages escape per Unicode scalar: no element may appear.
INSERT INTO reconcile.review_items
    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
     suggested_action, evidence, first_seen_run, last_seen_run)
SELECT 'missed_delivery:2000000123456789', 'missed_delivery', 'high', 'open', '2000000123456789', '2000000123456789',
       usr, product, 'grant',
       jsonb_build_object('apple_transaction', pg_temp.apple('2000000123456789', product, 1, 6000),
         'deliveries', '[]'::jsonb,
         'uploads', jsonb_build_array(pg_temp.upload(509, usr, 'iPhone15,2', '17.4', '5.2.0')),
         'buyer', jsonb_build_object('user_id', usr, 'basis', 'uploader', 'uploaders', 1)), 1, 2
  FROM (VALUES (E'\u0600<meta http-equiv=refresh content=0;url=about:blank><b id=injected>x</b>',
                E'coins"\u0301 autofocus onfocus=alert(4) data-injected="1')) AS hostile(usr, product);

-- The support desk: a credit for a transaction Apple never confirmed, with no review item yet
-- (the customer's page says what it is and opens the item).
INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
VALUES ('2000000990000001', 'player-88', 'coins_600', 1, now() - interval '2 days');

-- What the diff stores with each item for a decision.
\ir planted-item-actions.sql

-- What the granted item was found in (a decision that makes the app act judges its item again with
-- the nightly rules, SPEC section 6): Apple's transaction, uploaded and verified by player-42, never
-- credited.
INSERT INTO reconcile.apple_transactions
    (transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
     purchase_date, source, signed_date, price_milli, currency, storefront, ownership_type)
VALUES ('2000000222222222', '2000000222222222', 'coins_600', 'consumable', 'com.hncs.szj', 'Production', 1,
        now() - interval '2 days', 'verify_receipt', now() - interval '2 days', 6000, 'CNY', 'CHN', 'PURCHASED');
INSERT INTO reconcile.receipt_uploads (id, user_id, kind, payload, claimed_transaction_id, device, uploaded_at)
VALUES (502, 'player-42', 'app_receipt', 'receipt', '2000000222222222',
        '{"model": "iPhone14,2", "os_version": "17.1", "app_version": "5.1.9"}', now() - interval '2 days' + interval '20 seconds');
INSERT INTO reconcile.upload_verifications (upload_id, state, bundle_id, environment) VALUES (502, 'verified', 'com.hncs.szj', 'Production');
INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source)
VALUES ('2000000222222222', 502, 'player-42', 'verify_receipt');
