-- Who gets the goods and who loses them, stored with each review item when it is written,
-- instead of dug out of the evidence JSON when a person decides (SPEC section 6's actions).
--
-- A grant gives grant_product_id × grant_quantity (Apple's transaction) to grant_to_user_id (the
-- buyer); a revoke takes revoke_product_id × revoke_quantity (the unrevoked delivery the item is
-- about) from revoke_from_user_id; a move does both. NULL where the evidence cannot say.
ALTER TABLE reconcile.review_items
    ADD COLUMN grant_to_user_id text,
    ADD COLUMN grant_product_id text,
    ADD COLUMN grant_quantity integer,
    ADD COLUMN revoke_from_user_id text,
    ADD COLUMN revoke_product_id text,
    ADD COLUMN revoke_quantity integer;

-- The one definition, run whenever an item's evidence is written: the buyer is the evidence's
-- resolved buyer, else the item's account for the kinds whose account is the buyer. The
-- delivery is, for wrong_account, one to the account the wrong delivery credited; otherwise the
-- item's account's when it holds one, else the one account holding unrevoked deliveries; the
-- latest such delivery in the evidence. The evidence is read defensively: a missing or odd
-- `deliveries` is no delivery.
--
-- The diff writes a wrong_account item's credited account into revoke_from_user_id. A row
-- written without it (before this migration, or by hand) names it only in its fingerprint, which
-- ends in the md5 of that account.
CREATE FUNCTION reconcile.review_items_action() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deliveries jsonb := CASE jsonb_typeof(NEW.evidence->'deliveries')
                        WHEN 'array' THEN NEW.evidence->'deliveries' ELSE '[]' END;
    credited text := NEW.revoke_from_user_id;
BEGIN
    IF NEW.kind = 'wrong_account' AND credited IS NULL THEN
        SELECT e->>'user_id' INTO credited
          FROM jsonb_array_elements(deliveries) e
         WHERE NEW.fingerprint = 'wrong_account:' || NEW.transaction_id || ':' || md5(e->>'user_id')
         LIMIT 1;
    END IF;
    NEW.grant_to_user_id := coalesce(NEW.evidence->'buyer'->>'user_id',
                                     CASE WHEN NEW.kind IN ('missed_delivery', 'wrong_account') THEN NEW.user_id END);
    NEW.grant_product_id := NEW.evidence->'apple_transaction'->>'product_id';
    NEW.grant_quantity := (NEW.evidence->'apple_transaction'->>'quantity')::integer;
    SELECT e->>'user_id', e->>'product_id', (e->>'quantity')::integer
      INTO NEW.revoke_from_user_id, NEW.revoke_product_id, NEW.revoke_quantity
      FROM jsonb_array_elements(deliveries) WITH ORDINALITY AS x(e, n)
     WHERE coalesce(e->>'revoked_at', '') = ''
       AND CASE WHEN NEW.kind = 'wrong_account'
                THEN e->>'user_id' = credited
                ELSE e->>'user_id' IS NOT DISTINCT FROM NEW.user_id
                     OR (SELECT count(DISTINCT e2->>'user_id') FROM jsonb_array_elements(deliveries) e2
                          WHERE coalesce(e2->>'revoked_at', '') = '') = 1
           END
     ORDER BY (e->>'user_id' IS NOT DISTINCT FROM NEW.user_id) DESC, x.n DESC
     LIMIT 1;
    RETURN NEW;
END $$;

CREATE TRIGGER review_items_action BEFORE INSERT OR UPDATE OF evidence ON reconcile.review_items
    FOR EACH ROW EXECUTE FUNCTION reconcile.review_items_action();

-- Backfill: the trigger fills every existing item from its evidence.
UPDATE reconcile.review_items SET evidence = evidence;
