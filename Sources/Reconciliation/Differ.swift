import Foundation
import Postgres

/// Diffs Apple's transactions (the white table) against the delivery ledger (the black table)
/// inside PostgreSQL and keeps the review queue in step (SPEC sections 5 and 6).
///
/// Every step is one set-based statement over temporary tables; no table is pulled into the
/// process. The scope of a run is what the window touched plus every open review item, so a
/// nightly run over a long history only re-judges what can have changed.
public struct Differ: Sendable {
    /// What the diff needs to know about the run.
    public struct Parameters: Sendable {
        /// The run the findings belong to.
        public var runID: Int64
        /// Accepted bundle ids.
        public var bundleIDs: [String]
        /// Which purchases count as real money.
        public var environment: Settings.Environment
        /// Purchases and deliveries younger than this instant are not judged (run start − grace).
        public var judgeBefore: Date
        /// Window start; nil reconciles the whole history.
        public var since: Date?
        /// Window end.
        public var until: Date
        /// With Server API credentials, a delivery is unknown to Apple only after Get Transaction
        /// Info answered not found.
        public var serverAPIEnabled: Bool
        /// The last run that finished (0 for none). Runs after it that ended without finishing
        /// (killed, failed, interrupted, dry) verified uploads and confirmed transactions that no
        /// diff has judged since: they are in this run's scope as if this run had done the work.
        public var resumesAfter: Int64

        /// Creates the parameters; `resumesAfter` nil scopes the run to its own work.
        public init(
            runID: Int64, bundleIDs: [String], environment: Settings.Environment, judgeBefore: Date, since: Date?,
            until: Date, serverAPIEnabled: Bool, resumesAfter: Int64? = nil
        ) {
            self.runID = runID
            self.resumesAfter = resumesAfter ?? runID - 1
            self.bundleIDs = bundleIDs
            self.environment = environment
            self.judgeBefore = judgeBefore
            self.since = since
            self.until = until
            self.serverAPIEnabled = serverAPIEnabled
        }
    }

    /// What the queue upsert did.
    public struct QueueChanges: Sendable, Equatable {
        /// Items created by this run.
        public var created = 0
        /// Items seen again (still open, or touched but decided by a person).
        public var refreshed = 0
        /// Items auto-resolved because their condition is gone.
        public var autoResolved = 0
        /// Auto-resolved items whose condition came back.
        public var reopened = 0

        /// No changes (a dry run).
        public init() {}
    }

    /// The relations to read.
    public let uploads: String
    /// The delivery ledger relation.
    public let deliveries: String
    /// The product catalogue relation.
    public let products: String

    /// Creates a differ over (already validated and quoted) relation names.
    public init(uploads: String, deliveries: String, products: String) {
        self.uploads = uploads
        self.deliveries = deliveries
        self.products = products
    }

    /// Memory PostgreSQL may use for each hash or sort of the diff (its transaction only): the
    /// whole-history pass hashes millions of rows, which spill to disk in batches at the server's
    /// usual 4 MB. Server memory, not this process's.
    public static let workMem = "256MB"

    /// Computes this run's findings into the temporary table `diff_findings` (dropped at commit);
    /// call inside a transaction, then `upsertQueue` or read the findings.
    ///
    /// The findings are computed exactly over `diff_scope`, the transactions this run can have
    /// changed. A window run collects them from indexes (`scopeWindow`); a run over the whole
    /// history would put every transaction there, so it first keeps only those one pass over the
    /// white table, the ledger and the claims cannot prove clean (`scopeWholeHistory`).
    public func computeFindings(_ parameters: Parameters, on connection: Connection) throws {
        let counted = parameters.environment == .production ? "Production" : "Sandbox"
        try connection.execute("SET LOCAL work_mem = '\(Self.workMem)'")
        // JIT compiling takes half a second per statement whose estimate looks big, which temp
        // tables of a few thousand rows do before they are analysed; no statement here gains it back.
        try connection.execute("SET LOCAL jit = off")
        try connection.execute(
            """
            CREATE TEMP TABLE diff_params ON COMMIT DROP AS
            SELECT $1::bigint AS run_id, $2::text[] AS bundle_ids, $3::timestamptz AS judge_before,
                   $4::boolean AS api_enabled, $5::text AS counted, $6::timestamptz AS since, $7::timestamptz AS until,
                   $8::bigint AS resumes_after
            """,
            [parameters.runID, parameters.bundleIDs, parameters.judgeBefore, parameters.serverAPIEnabled, counted,
             parameters.since ?? Date.distantPast, parameters.until, parameters.resumesAfter])
        try connection.execute("ANALYZE diff_params")
        // Transactions an upload still being verified says it reports: not judged this run.
        try connection.executeScript(
            """
            CREATE TEMP TABLE diff_blocked ON COMMIT DROP AS
            SELECT DISTINCT u.claimed_transaction_id AS transaction_id
              FROM reconcile.upload_verifications v JOIN \(uploads) u ON u.id = v.upload_id
             WHERE v.state IN ('pending', 'retry') AND u.claimed_transaction_id IS NOT NULL;
            CREATE TEMP TABLE diff_pending_users ON COMMIT DROP AS
            SELECT DISTINCT u.user_id
              FROM reconcile.upload_verifications v JOIN \(uploads) u ON u.id = v.upload_id
             WHERE v.state IN ('pending', 'retry');
            CREATE TEMP TABLE diff_scope (transaction_id text PRIMARY KEY) ON COMMIT DROP;
            ANALYZE diff_blocked;
            ANALYZE diff_pending_users;
            """)
        try scopeTouchedByRun(resumesAfter: parameters.resumesAfter, on: connection)
        if parameters.since == nil {
            try scopeWholeHistory(parameters, counted: counted, on: connection)
        } else {
            try scopeWindow(since: parameters.since ?? Date.distantPast, until: parameters.until, on: connection)
        }
        // A non-consumable is matched by its original transaction: bring the whole family in.
        try connection.executeScript(
            """
            ANALYZE diff_scope;
            INSERT INTO diff_scope
            SELECT o.transaction_id
              FROM reconcile.apple_transactions a
              JOIN diff_scope s ON s.transaction_id = a.transaction_id
              LEFT JOIN \(products) p ON p.product_id = a.product_id
              JOIN reconcile.apple_transactions o ON o.original_transaction_id = a.original_transaction_id
             WHERE coalesce(a.product_type, p.product_type) = 'non_consumable'
            ON CONFLICT DO NOTHING;
            ANALYZE diff_scope;
            """)
        try connection.executeScript(
            """
            CREATE TEMP TABLE diff_tx ON COMMIT DROP AS
            SELECT a.transaction_id, a.original_transaction_id, a.product_id, a.bundle_id, a.environment,
                   a.quantity, a.purchase_date, a.revocation_date, a.ownership_type, a.app_account_token,
                   coalesce(a.product_type, p.product_type) AS product_type,
                   -- Apple's JWS `price` "shows the total amount of the transaction for the quantity the
                   -- customer purchased" (developer.apple.com/documentation/appstoreservernotifications/price);
                   -- the catalogue's price_milli is per unit.
                   coalesce(a.price_milli, p.price_milli * a.quantity) AS price_milli,
                   coalesce(a.price_milli::numeric / nullif(a.quantity, 0), p.price_milli) AS unit_price_milli,
                   coalesce(a.currency, p.currency) AS currency,
                   a.revocation_type, a.revocation_percentage,
                   -- A prorated refund's percentage is of the whole quantity (developer.apple.com/documentation/
                   -- storekit/transaction/revocationpercentage: 1 of 3 refunded is about 33.333%), so it
                   -- refunds that share of the units, rounded, at least one; any other revocation all of them.
                   CASE WHEN a.revocation_date IS NULL THEN 0
                        WHEN a.revocation_type = 'REFUND_PRORATED' AND a.revocation_percentage IS NOT NULL
                        THEN least(a.quantity, greatest(1, round(a.quantity * a.revocation_percentage / 100000.0)))::int
                        ELSE a.quantity END AS refunded_quantity,
                   CASE WHEN coalesce(a.product_type, p.product_type) = 'non_consumable'
                        THEN 'o:' || a.original_transaction_id ELSE 't:' || a.transaction_id END AS match_key,
                   a.bundle_id = ANY(x.bundle_ids) AS bundle_ok,
                   a.environment = x.counted AS counted,
                   a.bundle_id = ANY(x.bundle_ids) AND a.purchase_date <= x.judge_before
                       AND NOT EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = a.transaction_id)
                       AS judged
              FROM reconcile.apple_transactions a
              JOIN diff_scope s ON s.transaction_id = a.transaction_id
              LEFT JOIN \(products) p ON p.product_id = a.product_id
             CROSS JOIN diff_params x;
            CREATE INDEX ON diff_tx (transaction_id);
            CREATE INDEX ON diff_tx (match_key);
            ANALYZE diff_tx;
            -- One row per matching key: for a non-consumable the original purchase stands for its restores.
            CREATE TEMP TABLE diff_key ON COMMIT DROP AS
            SELECT DISTINCT ON (t.match_key) t.*,
                   bool_and(t.judged) OVER (PARTITION BY t.match_key) AS key_judged,
                   bool_or(t.revocation_date IS NOT NULL) OVER (PARTITION BY t.match_key) AS key_revoked,
                   max(t.refunded_quantity) OVER (PARTITION BY t.match_key) AS key_refunded_quantity
              FROM diff_tx t
             ORDER BY t.match_key, (t.transaction_id = t.original_transaction_id) DESC, t.purchase_date, t.transaction_id;
            CREATE INDEX ON diff_key (match_key);
            ANALYZE diff_key;
            """)
        try connection.executeScript(
            """
            CREATE TEMP TABLE diff_dl ON COMMIT DROP AS
            SELECT d.id, d.transaction_id, d.user_id, d.product_id, d.quantity, d.delivered_at, d.revoked_at,
                   t.match_key
              FROM \(deliveries) d
              JOIN diff_scope s ON s.transaction_id = d.transaction_id
              LEFT JOIN diff_tx t ON t.transaction_id = d.transaction_id;
            CREATE INDEX ON diff_dl (match_key);
            ANALYZE diff_dl;
            CREATE TEMP TABLE diff_claims ON COMMIT DROP AS
            SELECT c.transaction_id, c.upload_id, c.user_id, c.application_username, c.app_account_token
              FROM reconcile.transaction_claims c JOIN diff_tx t ON t.transaction_id = c.transaction_id;
            CREATE INDEX ON diff_claims (transaction_id);
            ANALYZE diff_claims;
            """)
        try computeBuyers(on: connection)
        try connection.executeScript(
            """
            CREATE TEMP TABLE diff_findings (
                fingerprint text PRIMARY KEY,
                kind text NOT NULL,
                transaction_id text,
                original_transaction_id text,
                user_id text,
                product_id text,
                upload_id bigint,
                match_key text,
                amount_milli bigint,
                currency text,
                purchase_date timestamptz,
                evidence jsonb
            ) ON COMMIT DROP
            """)
        for statement in findingStatements(environment: parameters.environment, resumesAfter: parameters.resumesAfter) {
            try connection.executeScript(statement)
        }
        try connection.execute("ANALYZE diff_findings")
        try attachEvidence(on: connection)
    }

    /// What the run itself touched, whatever the window: transactions Apple confirmed or changed
    /// in this run, what its uploads carried or said they reported, the ledger transactions Apple
    /// answered a lookup about, the deliveries of accounts whose uploads it verified (an earlier
    /// run could not judge them while those uploads were still retrying), and every transaction an
    /// open review item is about (so that it can auto-resolve). "This run" includes the runs since
    /// the last finished one (`resumes_after`): a run killed after it verified uploads left work no
    /// diff judged. Each branch reads an index; the run id is a bound value, not a read of
    /// `diff_params`, so that the planner sees how few rows lie past it.
    private func scopeTouchedByRun(resumesAfter: Int64, on connection: Connection) throws {
        try connection.execute(
            """
            INSERT INTO diff_scope
            SELECT transaction_id FROM reconcile.apple_transactions
             WHERE last_seen_run > $1
            UNION SELECT transaction_id FROM reconcile.transaction_claims
             WHERE run_id > $1
            UNION SELECT u.claimed_transaction_id FROM reconcile.upload_verifications v
                    JOIN \(uploads) u ON u.id = v.upload_id
             WHERE v.last_run_id > $1 AND u.claimed_transaction_id IS NOT NULL
            UNION SELECT transaction_id FROM reconcile.transaction_lookups
             WHERE run_id > $1
            UNION SELECT transaction_id FROM reconcile.review_items
             WHERE status IN ('open', 'in_review') AND transaction_id IS NOT NULL
            UNION SELECT d.transaction_id FROM \(deliveries) d
             WHERE d.user_id IN (SELECT u.user_id FROM reconcile.upload_verifications v
                                   JOIN \(uploads) u ON u.id = v.upload_id
                                  WHERE v.last_run_id > $1)
            ON CONFLICT DO NOTHING
            """, [resumesAfter])
    }

    /// A window run: the transactions bought in the window and the deliveries made or revoked in it.
    private func scopeWindow(since: Date, until: Date, on connection: Connection) throws {
        try connection.execute(
            """
            INSERT INTO diff_scope
            SELECT transaction_id FROM reconcile.apple_transactions
             WHERE purchase_date >= $1 AND purchase_date < $2
            UNION SELECT transaction_id FROM \(deliveries)
             WHERE delivered_at >= $1 AND delivered_at < $2
            UNION SELECT transaction_id FROM \(deliveries) WHERE revoked_at >= $1
            ON CONFLICT DO NOTHING
            """, [since, until])
    }

    /// A run over the whole history (no `--since`): every transaction bought and every delivery
    /// made before the window's end is in scope, but only those that can hold a finding are kept.
    ///
    /// One `FULL JOIN` of the white table, the ledger and the claims on the transaction id keeps
    /// every row that is not plainly clean: one Apple transaction of an accepted bundle and the
    /// counted environment, old enough to judge, not revoked, one unrevoked delivery of the same
    /// product and quantity to the account that uploaded it, its binding (token, or username equal
    /// to or hashing to the uploader) naming that same account, and no restore around it. A
    /// transaction credited twice looks clean row by row, so one grouping of the ledger adds the
    /// transaction ids it repeats. Whatever can hold a finding is kept (and more: every restore,
    /// every refund); the exact rules then run over this scope only.
    private func scopeWholeHistory(_ parameters: Parameters, counted: String, on connection: Connection) throws {
        // Bound values rather than reads of diff_params, so that the planner sees that the window
        // is everything and scans instead of walking the purchase-date index. The claims are
        // joined to the white table first: the FULL JOIN then hashes the narrow ledger rows.
        try connection.execute(
            """
            INSERT INTO diff_scope
            SELECT coalesce(a.transaction_id, d.transaction_id)
              FROM (SELECT a.transaction_id, a.original_transaction_id, a.product_id, a.quantity, a.bundle_id,
                           a.environment, a.purchase_date, a.revocation_date,
                           coalesce(a.product_type, p.product_type) AS product_type, c.user_id AS uploader,
                           c.application_username, c.username_names_uploader,
                           coalesce(a.app_account_token, c.app_account_token) AS token
                      FROM reconcile.apple_transactions a
                      LEFT JOIN reconcile.transaction_claims c ON c.transaction_id = a.transaction_id
                      LEFT JOIN \(products) p ON p.product_id = a.product_id
                     WHERE a.purchase_date < $1) a
              FULL JOIN (SELECT transaction_id, user_id, product_id, quantity, revoked_at FROM \(deliveries)
                          WHERE delivered_at < $1 OR revoked_at IS NOT NULL) d
                ON d.transaction_id = a.transaction_id
              LEFT JOIN reconcile.account_tokens k ON k.app_account_token = a.token
             WHERE NOT coalesce(
                   a.bundle_id = ANY($2::text[]) AND a.environment = $3 AND a.purchase_date <= $4
                   AND a.revocation_date IS NULL AND d.revoked_at IS NULL
                   AND d.product_id = a.product_id AND d.quantity = a.quantity
                   AND (a.transaction_id = a.original_transaction_id
                        OR a.product_type IS DISTINCT FROM 'non_consumable')
                   AND a.uploader = d.user_id
                   AND CASE WHEN a.token IS NOT NULL THEN k.user_id = d.user_id
                            WHEN a.application_username IS NOT NULL THEN a.username_names_uploader
                            ELSE true END,
                   false)
            ON CONFLICT DO NOTHING
            """, [parameters.until, parameters.bundleIDs, counted, parameters.judgeBefore])
        try connection.execute(
            """
            INSERT INTO diff_scope
            SELECT transaction_id FROM \(deliveries)
             GROUP BY transaction_id
            HAVING count(*) > 1 AND bool_or(delivered_at < $1 OR revoked_at IS NOT NULL)
            ON CONFLICT DO NOTHING
            """, [parameters.until])
    }

    /// Resolves each transaction's buyer (SPEC section 5): its appAccountToken (through
    /// `reconcile.account_tokens`, or equal to an account id), its applicationUsername (an account
    /// id or the lowercase hex SHA-256 of one), else its one uploader; several uploaders and no
    /// binding leave the buyer unknown.
    private func computeBuyers(on connection: Connection) throws {
        // The binding of the first upload that carried one (by upload id), and the uploaders.
        try connection.executeScript(
            """
            CREATE TEMP TABLE diff_bindings ON COMMIT DROP AS
            SELECT t.transaction_id, coalesce(t.app_account_token, c.token) AS token, c.username,
                   coalesce(c.uploaders, 0) AS uploaders, c.uploader
              FROM diff_tx t
              LEFT JOIN (SELECT transaction_id,
                                (array_agg(app_account_token ORDER BY upload_id)
                                    FILTER (WHERE app_account_token IS NOT NULL))[1] AS token,
                                (array_agg(application_username ORDER BY upload_id)
                                    FILTER (WHERE application_username IS NOT NULL))[1] AS username,
                                count(DISTINCT user_id) AS uploaders, min(user_id) AS uploader
                           FROM diff_claims GROUP BY transaction_id) c ON c.transaction_id = t.transaction_id;
            ANALYZE diff_bindings;
            CREATE TEMP TABLE diff_people (user_id text PRIMARY KEY, hash text NOT NULL) ON COMMIT DROP;
            CREATE INDEX ON diff_people (hash);
            CREATE INDEX ON diff_people (lower(user_id));
            """)
        // Accounts a binding can name: those in scope and those the tokens map to, then uploaders
        // named verbatim, then uploaders whose SHA-256 a still unresolved username is (through
        // the index on `reconcile.account_hash(user_id)`). Each step reads indexes, so the answer
        // does not depend on how much history the run looks at.
        try connection.executeScript(
            """
            INSERT INTO diff_people
            SELECT user_id, reconcile.account_hash(user_id)
              FROM (SELECT user_id FROM diff_claims UNION SELECT user_id FROM diff_dl
                    UNION SELECT k.user_id FROM reconcile.account_tokens k
                           WHERE k.app_account_token IN (SELECT token FROM diff_bindings)) known
            ON CONFLICT DO NOTHING;
            CREATE TEMP TABLE diff_names ON COMMIT DROP AS
            SELECT username AS name FROM diff_bindings WHERE username IS NOT NULL
            UNION SELECT token::text FROM diff_bindings WHERE token IS NOT NULL
            UNION SELECT upper(token::text) FROM diff_bindings WHERE token IS NOT NULL;
            ANALYZE diff_names;
            INSERT INTO diff_people
            SELECT user_id, reconcile.account_hash(user_id)
              FROM (SELECT DISTINCT u.user_id FROM \(uploads) u WHERE u.user_id IN (SELECT name FROM diff_names)) named
            ON CONFLICT DO NOTHING;
            CREATE TEMP TABLE diff_hashes ON COMMIT DROP AS
            SELECT DISTINCT lower(b.username) AS hash FROM diff_bindings b
             WHERE b.username ~ '^[0-9a-fA-F]{64}$'
               AND NOT EXISTS (SELECT 1 FROM diff_people p WHERE p.user_id = b.username)
               AND NOT EXISTS (SELECT 1 FROM diff_people p WHERE p.hash = lower(b.username));
            ANALYZE diff_hashes;
            """)
        // Without the index (an operator's own relation) this hashes every account: only when needed.
        if try connection.queryFirst("SELECT 1 FROM diff_hashes LIMIT 1") != nil {
            try connection.executeScript(
                """
                INSERT INTO diff_people
                SELECT user_id, reconcile.account_hash(user_id)
                  FROM (SELECT DISTINCT u.user_id FROM \(uploads) u
                         WHERE reconcile.account_hash(u.user_id) IN (SELECT hash FROM diff_hashes)) hashed
                ON CONFLICT DO NOTHING
                """)
        }
        try connection.executeScript(
            """
            ANALYZE diff_people;
            CREATE TEMP TABLE diff_buyer ON COMMIT DROP AS
            SELECT b.transaction_id, b.uploaders,
                   coalesce(k.user_id, tp.user_id, up.user_id, CASE WHEN b.uploaders = 1 THEN b.uploader END) AS buyer,
                   CASE WHEN k.user_id IS NOT NULL THEN 'app_account_token'
                        WHEN tp.user_id IS NOT NULL THEN 'app_account_token'
                        WHEN up.user_id IS NOT NULL THEN 'application_username'
                        WHEN b.uploaders = 1 THEN 'uploader'
                   END AS basis
              FROM diff_bindings b
              LEFT JOIN reconcile.account_tokens k ON k.app_account_token = b.token
              LEFT JOIN LATERAL (SELECT p.user_id FROM diff_people p
                                  WHERE b.token IS NOT NULL AND lower(p.user_id) = b.token::text LIMIT 1) tp ON true
              LEFT JOIN LATERAL (SELECT p.user_id FROM diff_people p
                                  WHERE p.user_id = b.username OR p.hash = lower(b.username)
                                  ORDER BY (p.user_id = b.username) DESC, p.user_id LIMIT 1) up ON true;
            CREATE INDEX ON diff_buyer (transaction_id);
            ANALYZE diff_buyer;
            """)
    }

    /// One INSERT per finding kind; the run's parameters are in `diff_params`.
    private func findingStatements(environment: Settings.Environment, resumesAfter: Int64) -> [String] {
        let fields = "fingerprint, kind, transaction_id, original_transaction_id, user_id, product_id, upload_id, "
            + "match_key, amount_milli, currency, purchase_date"
        // Each key's unrevoked deliveries.
        let liveDeliveries = "SELECT * FROM diff_dl d WHERE d.revoked_at IS NULL"
        var statements = [
            // Paid, unrevoked, counted, and no unrevoked delivery matches.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'missed_delivery:' || k.transaction_id, 'missed_delivery', k.transaction_id,
                   k.original_transaction_id, b.buyer, k.product_id, NULL, k.match_key,
                   k.price_milli, k.currency, k.purchase_date
              FROM diff_key k JOIN diff_buyer b ON b.transaction_id = k.transaction_id
             WHERE k.key_judged AND k.counted AND NOT k.key_revoked
               AND coalesce(k.ownership_type, 'PURCHASED') = 'PURCHASED'
               AND NOT EXISTS (\(liveDeliveries) AND d.match_key = k.match_key)
            """,
            // Two or more unrevoked deliveries for one key.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'duplicate_delivery:' || k.transaction_id, 'duplicate_delivery', k.transaction_id,
                   k.original_transaction_id, (array_agg(d.user_id ORDER BY d.delivered_at DESC, d.id DESC))[1],
                   k.product_id, NULL, k.match_key, k.price_milli * (count(*) - 1), k.currency,
                   k.purchase_date
              FROM diff_key k JOIN (\(liveDeliveries)) d ON d.match_key = k.match_key
             WHERE k.key_judged AND k.counted
             GROUP BY k.transaction_id, k.original_transaction_id, k.product_id, k.match_key, k.price_milli,
                      k.quantity, k.currency, k.purchase_date
            HAVING count(*) >= 2
            """,
            // The buyer is known and an unrevoked delivery went to another account.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT DISTINCT ON (k.transaction_id, d.user_id)
                   'wrong_account:' || k.transaction_id || ':' || md5(d.user_id), 'wrong_account', k.transaction_id,
                   k.original_transaction_id, b.buyer, k.product_id, NULL, k.match_key,
                   k.price_milli, k.currency, k.purchase_date
              FROM diff_key k
              JOIN diff_buyer b ON b.transaction_id = k.transaction_id
              JOIN (\(liveDeliveries)) d ON d.match_key = k.match_key
             WHERE k.key_judged AND k.counted AND b.buyer IS NOT NULL AND d.user_id <> b.buyer
            """,
            // A delivery names another product than Apple's transaction.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'product_mismatch:' || t.transaction_id || ':' || d.id, 'product_mismatch', t.transaction_id,
                   t.original_transaction_id, d.user_id, t.product_id, NULL, t.match_key, NULL, NULL, t.purchase_date
              FROM diff_tx t JOIN (\(liveDeliveries)) d ON d.transaction_id = t.transaction_id
             WHERE t.judged AND t.counted AND d.product_id <> t.product_id
            """,
            // Exactly one unrevoked delivery, with another quantity than Apple's. After a partial
            // refund, a delivery already reduced by the refunded units is right too.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'quantity_mismatch:' || k.transaction_id, 'quantity_mismatch', k.transaction_id,
                   k.original_transaction_id, min(d.user_id), k.product_id, NULL, k.match_key,
                   round(k.unit_price_milli * abs(k.quantity - min(d.quantity))), k.currency, k.purchase_date
              FROM diff_key k JOIN (\(liveDeliveries)) d ON d.match_key = k.match_key
             WHERE k.key_judged AND k.counted
             GROUP BY k.transaction_id, k.original_transaction_id, k.product_id, k.match_key, k.unit_price_milli,
                      k.quantity, k.key_refunded_quantity, k.currency, k.purchase_date
            HAVING count(*) = 1 AND min(d.quantity) <> k.quantity
               AND (k.key_refunded_quantity = 0 OR min(d.quantity) <> k.quantity - k.key_refunded_quantity)
            """,
            // Apple revoked or refunded it, and the unrevoked deliveries hold more than Apple's
            // quantity minus the refunded units (a full refund: any unrevoked delivery). At risk: the
            // refunded units. A Family Sharing revocation returns no money to anyone: nothing at risk.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'refunded_delivery:' || k.transaction_id, 'refunded_delivery', k.transaction_id,
                   k.original_transaction_id, (array_agg(d.user_id ORDER BY d.id))[1], k.product_id, NULL,
                   k.match_key,
                   CASE WHEN k.revocation_type IS DISTINCT FROM 'FAMILY_REVOKE'
                        THEN round(k.unit_price_milli * k.key_refunded_quantity) END,
                   k.currency, k.purchase_date
              FROM diff_key k JOIN (\(liveDeliveries)) d ON d.match_key = k.match_key
             WHERE k.key_judged AND k.counted AND k.key_revoked
             GROUP BY k.transaction_id, k.original_transaction_id, k.product_id, k.match_key, k.unit_price_milli,
                      k.quantity, k.key_refunded_quantity, k.revocation_type, k.currency, k.purchase_date
            HAVING sum(d.quantity) > k.quantity - k.key_refunded_quantity
            """,
            // A delivery whose transaction no verified source of this app contains, judged once the
            // delivery's user has nothing left to verify (and, with the Server API, after Get
            // Transaction Info answered not found in both environments).
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'unverified_delivery:' || d.transaction_id || ':' || md5(d.user_id), 'unverified_delivery',
                   d.transaction_id, NULL, d.user_id, min(d.product_id), NULL, NULL,
                   sum(p.price_milli * d.quantity), min(p.currency), NULL
              FROM diff_dl d LEFT JOIN \(products) p ON p.product_id = d.product_id
             WHERE d.revoked_at IS NULL AND d.delivered_at <= (SELECT judge_before FROM diff_params)
               AND NOT EXISTS (SELECT 1 FROM diff_tx t WHERE t.transaction_id = d.transaction_id AND t.bundle_ok)
               AND NOT EXISTS (SELECT 1 FROM diff_blocked b WHERE b.transaction_id = d.transaction_id)
               AND NOT EXISTS (SELECT 1 FROM diff_pending_users q WHERE q.user_id = d.user_id)
               AND (NOT (SELECT api_enabled FROM diff_params) OR EXISTS (SELECT 1 FROM reconcile.transaction_lookups l
                                              WHERE l.transaction_id = d.transaction_id AND l.result = 'not_found'))
             GROUP BY d.transaction_id, d.user_id
            """,
            // An upload's receipt or transaction belongs to another app.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'foreign_bundle:' || v.upload_id, 'foreign_bundle',
                   coalesce(u.claimed_transaction_id,
                            (SELECT min(c.transaction_id) FROM reconcile.transaction_claims c WHERE c.upload_id = v.upload_id)),
                   NULL, u.user_id, NULL, v.upload_id, NULL, NULL, NULL, NULL
              FROM reconcile.upload_verifications v JOIN \(uploads) u ON u.id = v.upload_id
             WHERE v.state = 'verified' AND v.bundle_id IS NOT NULL AND NOT (v.bundle_id = ANY((SELECT bundle_ids FROM diff_params)::text[]))
               AND v.upload_id IN (SELECT upload_id FROM reconcile.upload_verifications
                                    WHERE last_run_id > \(resumesAfter)
                                   UNION SELECT upload_id FROM reconcile.review_items
                                    WHERE kind = 'foreign_bundle' AND status IN ('open', 'in_review'))
            """,
            // The same transaction uploaded by two or more accounts.
            """
            INSERT INTO diff_findings (\(fields))
            SELECT 'shared_receipt:' || t.transaction_id, 'shared_receipt', t.transaction_id,
                   t.original_transaction_id, b.buyer, t.product_id, NULL, t.match_key, NULL, NULL, t.purchase_date
              FROM diff_tx t JOIN diff_buyer b ON b.transaction_id = t.transaction_id
             WHERE t.judged AND b.uploaders >= 2
            """,
        ]
        if environment == .production {
            // A sandbox (tester's) purchase credited as if it were real money.
            statements.append(
                """
                INSERT INTO diff_findings (\(fields))
                SELECT 'environment_mismatch:' || k.transaction_id, 'environment_mismatch', k.transaction_id,
                       k.original_transaction_id, min(d.user_id), k.product_id, NULL, k.match_key,
                       k.price_milli, k.currency, k.purchase_date
                  FROM diff_key k JOIN (\(liveDeliveries)) d ON d.match_key = k.match_key
                 WHERE k.key_judged AND k.environment = 'Sandbox'
                 GROUP BY k.transaction_id, k.original_transaction_id, k.product_id, k.match_key, k.price_milli,
                          k.quantity, k.currency, k.purchase_date
                """)
        }
        return statements
    }

    /// Evidence for each finding: the Apple transaction, the ledger rows, the uploads with device
    /// info and verification state, and how the buyer was resolved.
    private func attachEvidence(on connection: Connection) throws {
        try connection.executeScript(
            """
            UPDATE diff_findings f SET evidence = jsonb_build_object(
                'apple_transaction', (SELECT to_jsonb(a) FROM reconcile.apple_transactions a
                                       WHERE a.transaction_id = f.transaction_id),
                'deliveries', coalesce((SELECT jsonb_agg(to_jsonb(d) ORDER BY d.id) FROM \(deliveries) d
                                         WHERE d.transaction_id IN (SELECT f.transaction_id
                                                                    UNION SELECT t.transaction_id FROM diff_tx t
                                                                     WHERE t.match_key = f.match_key)), '[]'),
                'uploads', coalesce((SELECT jsonb_agg(jsonb_build_object(
                                        'id', u.id, 'user_id', u.user_id, 'kind', u.kind, 'uploaded_at', u.uploaded_at,
                                        'device', u.device, 'application_username', u.application_username,
                                        'app_account_token', u.app_account_token,
                                        'claimed_transaction_id', u.claimed_transaction_id,
                                        'verification', v.state, 'apple_status', v.apple_status,
                                        'error', v.last_error, 'environment', v.environment, 'bundle_id', v.bundle_id)
                                        ORDER BY u.id)
                                      FROM \(uploads) u
                                      LEFT JOIN reconcile.upload_verifications v ON v.upload_id = u.id
                                     WHERE u.id IN (SELECT c.upload_id FROM reconcile.transaction_claims c
                                                     WHERE c.transaction_id = f.transaction_id
                                                    UNION SELECT u2.id FROM \(uploads) u2
                                                     WHERE u2.claimed_transaction_id = f.transaction_id
                                                    UNION SELECT f.upload_id)), '[]'),
                'buyer', (SELECT jsonb_build_object('user_id', b.buyer, 'basis', b.basis, 'uploaders', b.uploaders)
                            FROM diff_buyer b WHERE b.transaction_id = f.transaction_id)
            ) || CASE WHEN f.kind = 'refunded_delivery' THEN coalesce(
                     (SELECT jsonb_build_object('refunded_quantity', k.key_refunded_quantity,
                                                'revocation_type', k.revocation_type,
                                                'revocation_percentage', k.revocation_percentage)
                        FROM diff_key k WHERE k.match_key = f.match_key), '{}') ELSE '{}' END
            """)
    }

    /// Upserts the review queue from `diff_findings` (SPEC section 6): one item per fingerprint
    /// ever, refreshed when seen again, auto-resolved when its condition is gone, reopened only if
    /// it was auto-resolved. Items a person resolved or dismissed keep their status. Every status
    /// change writes a review event in the same transaction.
    public func upsertQueue(runID: Int64, on connection: Connection) throws -> QueueChanges {
        var changes = QueueChanges()
        changes.reopened = try connection.execute(
            """
            WITH reopened AS (
                UPDATE reconcile.review_items r SET status = 'open', updated_at = now(), last_seen_run = $1
                  FROM diff_findings f
                 WHERE f.fingerprint = r.fingerprint AND r.status = 'auto_resolved'
                RETURNING r.id
            )
            INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
            SELECT id, $1, 'reconcile', 'auto_resolved', 'open', 'detected again' FROM reopened
            """, [runID])
        let severity = FindingKind.allCases.map { "WHEN '\($0.rawValue)' THEN '\($0.severity)'" }.joined(separator: " ")
        let action = FindingKind.allCases.map { "WHEN '\($0.rawValue)' THEN '\($0.suggestedAction)'" }
            .joined(separator: " ")
        let rows = try connection.query(
            """
            WITH upserted AS (
                INSERT INTO reconcile.review_items AS r
                    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id,
                     product_id, upload_id, suggested_action, evidence, first_seen_run, last_seen_run)
                SELECT f.fingerprint, f.kind, CASE f.kind \(severity) END, 'open', f.transaction_id,
                       f.original_transaction_id, f.user_id, f.product_id, f.upload_id,
                       CASE f.kind \(action) END, f.evidence, $1, $1
                  FROM diff_findings f
                ON CONFLICT (fingerprint) DO UPDATE
                   SET last_seen_run = EXCLUDED.last_seen_run,
                       evidence = CASE WHEN r.status IN ('open', 'in_review') THEN EXCLUDED.evidence ELSE r.evidence END,
                       updated_at = CASE WHEN r.status IN ('open', 'in_review') THEN now() ELSE r.updated_at END
                RETURNING r.id, (xmax = 0) AS inserted
            ), events AS (
                INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
                SELECT id, $1, 'reconcile', NULL, 'open', 'detected' FROM upserted WHERE inserted
                RETURNING review_item_id
            )
            SELECT count(*) FILTER (WHERE inserted) AS created, count(*) FILTER (WHERE NOT inserted) AS refreshed
              FROM upserted
            """, [runID])
        changes.created = try rows[0].decode(Int.self, "created")
        changes.refreshed = try rows[0].decode(Int.self, "refreshed")
        Failpoint.pass("queue.upsert")
        // Open items this run judged and no longer detects. Items whose transaction (or user, for
        // unknown deliveries) still waits on a verification were not judged and stay as they are.
        changes.autoResolved = try connection.execute(
            """
            WITH gone AS (
                SELECT r.id, r.status AS old_status
                  FROM reconcile.review_items r
                 WHERE r.status IN ('open', 'in_review')
                   AND NOT EXISTS (SELECT 1 FROM diff_findings f WHERE f.fingerprint = r.fingerprint)
                   AND (r.kind = 'foreign_bundle'
                        OR (r.transaction_id IN (SELECT transaction_id FROM diff_scope)
                            AND r.transaction_id NOT IN (SELECT transaction_id FROM diff_blocked)
                            AND NOT (r.kind = 'unverified_delivery'
                                     AND r.user_id IN (SELECT user_id FROM diff_pending_users))))
                 FOR UPDATE
            ), resolved AS (
                UPDATE reconcile.review_items r SET status = 'auto_resolved', updated_at = now()
                  FROM gone WHERE gone.id = r.id
                RETURNING r.id, gone.old_status
            )
            INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
            SELECT id, $1, 'reconcile', old_status, 'auto_resolved', 'condition no longer detected' FROM resolved
            """, [runID])
        return changes
    }
}
