-- Policies (SPEC section 17, issue 27 item 2): named rules of RECONCILE_POLICY_FILE decide open
-- review items after every run and every judgement of the notification receiver, as the actor
-- `policy:<name>`, through the same transitions as a person (sql/review/). What they match on and
-- how their limits are counted is read from here.

-- The sources that confirmed a transaction (SPEC section 13's `sources`): the source Apple's row
-- came from, every upload's or history's claim, a Server API lookup that found it, an applied
-- notification, an order lookup. A policy's `sources` condition asks it per item
-- (sql/policy/matches.sql).
CREATE VIEW reconcile.transaction_sources (transaction_id, source) AS
SELECT a.transaction_id, a.source FROM reconcile.apple_transactions a
UNION ALL
SELECT c.transaction_id, c.source FROM reconcile.transaction_claims c
UNION ALL
SELECT l.transaction_id, 'server_api' FROM reconcile.transaction_lookups l WHERE l.result = 'found'
UNION ALL
SELECT n.transaction_id, 'notification' FROM reconcile.notification_verifications n
 WHERE n.state = 'applied' AND n.transaction_id IS NOT NULL
UNION ALL
SELECT o.transaction_id, 'order_lookup' FROM reconcile.order_transactions o;

-- A policy's decisions are its events (actor `policy:<name>`, with the run whose pass made them):
-- its limits per run and the report's and the runs page's counts read them by actor and run. The
-- prefix is PolicyRule.actorPrefix; the statements that count repeat this predicate so that the
-- planner can use the index.
CREATE INDEX review_events_policy_idx ON reconcile.review_events (actor, run_id) WHERE actor LIKE 'policy:%';
CREATE INDEX review_events_policy_run_idx ON reconcile.review_events (run_id) WHERE actor LIKE 'policy:%';
