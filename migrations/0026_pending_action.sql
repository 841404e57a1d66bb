-- What a decision waiting for approval would make the app do (issue 36 item 5): the action, the
-- product, the units and the accounts its decider was shown, kept with the pending decision, so an
-- approval takes effect exactly as decided or, when what it would do has changed meanwhile (a run
-- bound the purchase to another account, the app credited some units), is refused and the item
-- goes back to open (SPEC section 17). Null for a pending decision that makes the app do nothing.
ALTER TABLE reconcile.review_items ADD COLUMN pending_action jsonb;
