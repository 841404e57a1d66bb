-- Issue 38 (SPEC section 18): Google Play's real-time developer notifications, as the receiver
-- (`reconcile notifications receive --play-path`) takes them from Cloud Pub/Sub push requests.
--
-- Each push is stored once per Pub/Sub messageId, the body exactly as posted, answered 204 after
-- the commit. Its data is decoded when it can be (the DeveloperNotification's kind, package,
-- purchase token); data that does not decode is stored raw with why (data_error), never refused:
-- Pub/Sub would redeliver a refusal for days. A notification is never trusted for a purchase's
-- state: the receiver's worker asks the Developer API about the token it names, and records
-- here what came of it.
CREATE TABLE reconcile.play_notifications (
    id bigserial PRIMARY KEY,
    -- message.messageId (or message_id): Pub/Sub's redelivery of a push carries the same one.
    message_id text NOT NULL UNIQUE,
    subscription text,
    publish_time timestamptz,
    -- The push request's body, exactly as posted.
    body text NOT NULL,
    -- The decoded data (the DeveloperNotification's JSON), when it was base64 text.
    data text,
    -- Why the data is not a developer notification (no_data, data_not_base64, data_not_json).
    data_error text,
    -- one_time, subscription, voided, test, unknown (a kind newer than this code), undecodable.
    kind text NOT NULL CHECK (kind IN ('one_time', 'subscription', 'voided', 'test', 'unknown', 'undecodable')),
    notification_type integer,
    package_name text,
    purchase_token text,
    -- voidedPurchaseNotification.orderId.
    order_id text,
    event_time timestamptz,
    received_at timestamptz NOT NULL DEFAULT now(),
    -- pending: to be asked of the Developer API; applied: Google answered and the white row is
    -- stored; not_found: Google does not know the token (404); gone: Google no longer keeps it
    -- (410); stored: nothing to ask (a test, an unknown kind, undecodable data, a package not
    -- reconciled). Google answering anything else (5xx, 429, another 4xx, 401/403 for the service
    -- account) leaves it pending, asked again later.
    state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'applied', 'not_found', 'gone', 'stored')),
    -- A pending notification is not taken again before this (a lease while one is asked, a wait
    -- after Google could not answer or refused the service account).
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    -- The white row (order id, or the purchase token without one) the answer stored.
    transaction_id text,
    processed_at timestamptz,
    processed_run bigint REFERENCES reconcile.runs (id)
);
CREATE INDEX play_notifications_pending_idx ON reconcile.play_notifications (next_attempt_at, id)
    WHERE state = 'pending';
CREATE INDEX play_notifications_token_idx ON reconcile.play_notifications (purchase_token);
