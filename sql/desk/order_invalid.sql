-- Records that Look Up Order ID found no such order (or refused it).
-- Reads:  reconcile.order_lookups
-- Writes: reconcile.order_lookups (status 'invalid')
-- Values: :'order_id' (text).
INSERT INTO reconcile.order_lookups (order_id, status) VALUES (:'order_id'::text, 'invalid')
ON CONFLICT (order_id) DO UPDATE SET status = 'invalid', checked_at = now();
