-- Stage: dl — the ledger's deliveries in scope, with the key they match and their store.
-- Reads:  diff_scope, diff_tx, :deliveries
-- Writes: diff_dl (one row per delivery; match_key NULL when the store's transaction is not in
--         diff_tx; store: the matched transaction's, else the ledger row's own, SPEC section 18)
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS diff_dl (
    id bigint, transaction_id text, user_id text, product_id text, quantity integer,
    delivered_at timestamptz, revoked_at timestamptz, match_key text, store text
) ON COMMIT DELETE ROWS;
CREATE INDEX IF NOT EXISTS diff_dl_match_key ON diff_dl (match_key);

INSERT INTO diff_dl (id, transaction_id, user_id, product_id, quantity, delivered_at, revoked_at, match_key,
                     store)
SELECT d.id, d.transaction_id, d.user_id, d.product_id, d.quantity, d.delivered_at, d.revoked_at,
       t.match_key, t.store
  FROM :deliveries d
  JOIN diff_scope s ON s.transaction_id = d.transaction_id
  LEFT JOIN diff_tx t ON t.transaction_id = d.transaction_id;

-- A delivery no transaction matches takes its store from the ledger: its optional `store` column,
-- read through the row's JSON since an operator's relation may lack it (these rows are few: the
-- deliveries nobody verified), else its id's form (reconcile.ledger_store).
UPDATE diff_dl l SET store = reconcile.ledger_store(to_jsonb(d) ->> 'store', d.transaction_id)
  FROM :deliveries d
 WHERE l.store IS NULL AND d.transaction_id = l.transaction_id AND d.id = l.id;

ANALYZE diff_dl;
