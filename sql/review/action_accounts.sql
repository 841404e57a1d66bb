-- Who the app gives to and takes from when an item is decided, as the diff stored it with the
-- item (reconcile.review_item_action, migrations 0006 and 0007).
-- Reads:  reconcile.review_items
-- Writes: nothing.
-- Values: :'id' (bigint).
SELECT grant_to_user_id AS buyer, grant_product_id AS apple_product, grant_quantity AS apple_quantity,
       revoke_from_user_id AS delivery_user, revoke_product_id AS delivery_product,
       revoke_quantity AS delivery_quantity
  FROM reconcile.review_items
 WHERE id = :'id'::bigint;
