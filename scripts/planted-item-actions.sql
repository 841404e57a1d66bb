-- What the diff stores with each review item for a decision (sql/diff/71_actions.sql), for items
-- planted by hand with evidence in the differ's shape (scripts/browser-test-seed.sql, the tests'
-- ReviewFixtures): the buyer gets Apple's product; the latest unrevoked delivery is taken back
-- (each planted item's deliveries are one account's).
UPDATE reconcile.review_items
   SET grant_to_user_id = evidence->'buyer'->>'user_id',
       grant_product_id = evidence->'apple_transaction'->>'product_id',
       grant_quantity = (evidence->'apple_transaction'->>'quantity')::integer,
       (revoke_from_user_id, revoke_product_id, revoke_quantity) = (
           SELECT e->>'user_id', e->>'product_id', (e->>'quantity')::integer
             FROM jsonb_array_elements(evidence->'deliveries') WITH ORDINALITY AS x(e, n)
            WHERE e->>'revoked_at' IS NULL
            ORDER BY n DESC LIMIT 1);
