-- A refund request's own signed transaction names the product's type (its `type`): kept with the
-- request, so that an answer sent before any run applied the transaction still knows a
-- subscription (SPEC section 14: no consumptionPercentage for subscriptions) and a non-consumable
-- (whose restores' deliveries count, SPEC section 5) when neither the white table nor the
-- optional product catalogue does. Null for notifications seen before this migration.
ALTER TABLE reconcile.notifications_seen ADD COLUMN product_type text;
