import Foundation
import GooglePlay
import Logging
import Postgres
import Synchronization

/// What the receiver's worker does with the Google Play notifications the listener stored
/// (``PlayNotificationReceiver``; SPEC section 18), in each pass of ``ReceiverWorker``:
///
/// - a notification is never trusted for a purchase's state: the worker asks the Developer API
///   about the purchase token it names (``PlayUploadVerifier/ask(_:packageName:token:subscription:logger:)``,
///   the uploads' own question: subscriptionsv2 for a subscription, productsv2 for a one-time
///   product) and stores what Google answers as the white row, through ``TransactionStore``, as
///   an upload's answer is stored;
/// - a `voidedPurchaseNotification` is recorded as a void (``PlayVoids/record(_:runID:on:)``) only
///   as Google's voided-purchases list confirms it; the token's state is stored all the same (a
///   one-time purchase's `CANCELLED`, or its refundable quantity, is a revocation by itself);
/// - the transactions it stored or revoked are queued for judgement once their grace period has
///   passed (`receiver_judgements`), and the same pass judges those due as it judges Apple's
///   (a voided purchase still credited is a `refunded_delivery` item at once; a paid purchase never
///   credited a `missed_delivery` item once its grace has passed);
/// - a token Google does not know (404) or no longer keeps (410) changes nothing;
/// - Google unable to answer (5xx, 429, a timeout) leaves the notification pending, asked again
///   after a wait that doubles; Google refusing the service account (401, 403) is logged clearly,
///   leaves every notification pending, and pauses the asking for `refusedWait`;
/// - without a service account nothing can be asked: the notifications stay stored, pending, and
///   the log says so once.
///
/// A pass asks about at most `perPass` notifications and starts none after `budget`: Google's
/// retries must not hold up Apple's refunds, which the same pass judges.
public final class PlayNotificationWorker: Sendable {
    public struct Timing: Sendable {
        /// The most notifications one pass asks Google about.
        public var perPass = 50
        /// No notification is started after this much of a pass.
        public var budget: Duration = .seconds(20)
        /// How long a notification taken by a pass is left to it (longer than asking can take).
        public var leaseSeconds = 300.0
        /// The first wait after Google could not answer; doubles per attempt, at most an hour.
        public var firstRetrySeconds = 30.0
        /// The wait after Google refused the service account (401, 403).
        public var refusedWaitSeconds = 300.0

        public init() {}
    }

    /// What one pass did with Play's notifications.
    public struct Summary: Sendable, Equatable {
        /// Google answered; the white row stored.
        public var applied = 0
        /// Google does not know the token, or no longer keeps it: nothing changed.
        public var unknown = 0
        /// Left pending: Google could not answer now, or refused the service account.
        public var waiting = 0
        /// Google refused the service account in this pass.
        public var refused = false

        public init() {}
    }

    let api: PlayDeveloperAPIClient?
    let packageNames: Set<String>
    let grace: TimeInterval
    let timing: Timing
    let logger: Logger
    private struct State {
        var saidNoAPI = false
        var pausedUntil: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    /// A worker asking `api` (nil without `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`: it asks nothing) about
    /// the notifications of `packageNames` (`GOOGLE_PLAY_PACKAGE_NAMES`; others are kept, not asked).
    public init(
        api: PlayDeveloperAPIClient?, packageNames: [String], grace: TimeInterval, timing: Timing = Timing(),
        logger: Logger
    ) {
        self.api = api
        self.packageNames = Set(packageNames)
        self.grace = grace
        self.timing = timing
        self.logger = logger
    }

    /// The worker for Play's settings (nil while Play is off).
    public convenience init?(services: PlayServices?, settings: Settings, timing: Timing = Timing(), logger: Logger) {
        guard let services else { return nil }
        self.init(
            api: services.api, packageNames: services.settings.packageNames, grace: settings.grace, timing: timing,
            logger: logger)
    }

    /// One pass over the pending notifications; `runID` records the receiver's run (called only
    /// when there is work). The transactions it stored are noted for judgement in the transaction
    /// that stored them, so the caller's judgement of due transactions, after it, judges them;
    /// a nightly run, whose diff judges what it stored, passes `notingJudgements: false`.
    public func pass(runID: () throws -> Int64, notingJudgements: Bool = true, on connection: Connection) async throws
        -> Summary
    {
        var summary = Summary()
        guard let api else {
            let say = state.withLock { state in
                defer { state.saidNoAPI = true }
                return !state.saidNoAPI
            }
            if say {
                logger.notice(
                    "Google Play notifications are stored but not acted on: without GOOGLE_PLAY_SERVICE_ACCOUNT_FILE the receiver cannot ask the Developer API about their purchases")
            }
            return summary
        }
        let clock = ContinuousClock()
        let started = clock.now
        if let until = state.withLock({ $0.pausedUntil }), until > started { return summary }
        guard try connection.query(PlayReceiverSQL.pending)[0].decode(Bool.self, at: 0) else { return summary }
        let run = try runID()
        let claimed = try connection.query(
            PlayReceiverSQL.claim, ["limit": timing.perPass, "lease_seconds": timing.leaseSeconds]
        ).map(Claimed.init)
        for (index, notification) in claimed.enumerated() {
            if clock.now - started > timing.budget {
                // Left for the next pass, at once: no attempt was made.
                try postpone(claimed[index...].map(\.id), error: nil, seconds: 0, counted: false, on: connection)
                break
            }
            do {
                switch try await handle(
                    notification, api: api, runID: run, notingJudgements: notingJudgements, on: connection)
                {
                case .applied: summary.applied += 1
                case .unknown: summary.unknown += 1
                case .waiting: summary.waiting += 1
                }
            } catch let error as PlayAPIConfigurationError {
                let wait = timing.refusedWaitSeconds
                state.withLock { $0.pausedUntil = clock.now + .milliseconds(Int64(wait * 1000)) }
                // Every notification stays pending; none is asked again before the wait is over.
                try postpone([notification.id], error: "\(error)", seconds: wait, counted: true, on: connection)
                try postpone(
                    claimed[(index + 1)...].map(\.id), error: nil, seconds: wait, counted: false, on: connection)
                summary.refused = true
                summary.waiting += claimed.count - index
                logger.error(
                    "Google refused the receiver's service account; Play notifications are kept and asked again later",
                    metadata: [
                        "error": "\(error)", "google.http_status": "\(error.httpStatus)",
                        "retry_in_seconds": "\(Int(wait))",
                    ])
                break
            }
        }
        if summary != Summary() {
            logger.info(
                "Play notifications asked of Google",
                metadata: [
                    "run.id": "\(run)", "play.applied": "\(summary.applied)", "play.unknown": "\(summary.unknown)",
                    "play.waiting": "\(summary.waiting)",
                ])
        }
        return summary
    }

    /// A nightly run's asking (the `play_api` stage): passes until none is left due, so a
    /// notification the receiver stored and never asked about (its worker down, or without a
    /// service account then) is judged by the next run as Apple's stored notifications are. The
    /// run's diff judges what the passes stored (the rows carry the run's id), so nothing is noted
    /// for the receiver's judgement. The lease keeps a receiver running beside it off the same ones.
    public func drain(runID: Int64, on connection: Connection) async throws -> Summary {
        var total = Summary()
        while true {
            let summary = try await pass(runID: { runID }, notingJudgements: false, on: connection)
            total.applied += summary.applied
            total.unknown += summary.unknown
            total.waiting += summary.waiting
            total.refused = total.refused || summary.refused
            // Nothing was due, or Google refused the service account: every other one waits.
            if summary == Summary() || summary.refused { return total }
        }
    }

    /// A notification the pass took.
    struct Claimed {
        var id: Int64
        var messageID: String
        var kind: String
        var notificationType: Int?
        var packageName: String
        var purchaseToken: String
        var orderID: String?
        var eventTime: Date?
        var publishTime: Date?
        var attempts: Int

        init(_ row: Row) throws {
            id = try row["id"]
            messageID = try row["message_id"]
            kind = try row["kind"]
            notificationType = try row["notification_type"]
            packageName = try row.decode(String?.self, "package_name") ?? ""
            purchaseToken = try row.decode(String?.self, "purchase_token") ?? ""
            orderID = try row["order_id"]
            eventTime = try row["event_time"]
            publishTime = try row["publish_time"]
            attempts = try row["attempts"]
        }

        /// A subscription's, asked of subscriptionsv2 (a void's `productType` 1 is a subscription).
        var isSubscription: Bool { kind == "subscription" || (kind == "voided" && notificationType == 1) }
        /// When Google says it happened (else when Pub/Sub published it).
        var when: Date? { eventTime ?? publishTime }
    }

    enum Outcome { case applied, unknown, waiting }

    private func handle(
        _ notification: Claimed, api: PlayDeveloperAPIClient, runID: Int64, notingJudgements: Bool,
        on connection: Connection
    ) async throws -> Outcome {
        var log = logger
        log[metadataKey: "play.message_id"] = "\(notification.messageID)"
        guard packageNames.contains(notification.packageName) else {
            try finish(notification, state: "stored", transaction: nil,
                       error: "package \(notification.packageName) is not in GOOGLE_PLAY_PACKAGE_NAMES", runID: runID,
                       on: connection)
            return .unknown
        }
        let answer = try await PlayUploadVerifier.ask(
            api, packageName: notification.packageName, token: notification.purchaseToken,
            subscription: notification.isSubscription, logger: log)
        let observed: PlayObservedState
        switch answer {
        case .unknownToGoogle:
            // A token Google does not know changes nothing: no row, no judgement.
            try finish(notification, state: "not_found", transaction: nil, error: nil, runID: runID, on: connection)
            log.notice("Play notification names a purchase token Google does not know (404); nothing changed")
            return .unknown
        case .noLongerKept:
            try finish(notification, state: "gone", transaction: nil, error: nil, runID: runID, on: connection)
            return .unknown
        case .retry(let reason):
            try postponeAfterFailure(notification, reason: reason, on: connection)
            return .waiting
        case .state(let state):
            observed = state
        }
        var voids: [PlayVoid] = []
        if notification.kind == "voided" {
            guard let confirmed = try await confirmedVoids(of: notification, api: api, logger: log) else {
                try postponeAfterFailure(notification, reason: "Google's voided-purchases list could not be read", on: connection)
                return .waiting
            }
            voids = confirmed
        }
        // A subscription's orders up to the latest the answer names, each dated by Google's order
        // (a notification asked late names an older renewal than the latest, and its time is not
        // the latest's): PlaySubscriptionOrders.
        var orders: [String] = []
        if observed.subscription, let latest = observed.orderID {
            switch try await PlaySubscriptionOrders(api: api, logger: log).storeMissing(
                upTo: latest, token: notification.purchaseToken, package: notification.packageName, observed: observed,
                runID: runID, on: connection)
            {
            case .stored(let stored):
                orders = stored
            case .retry(let reason):
                try postponeAfterFailure(notification, reason: reason, on: connection)
                return .waiting
            }
        }
        guard let record = try whiteRow(observed, of: notification, on: connection) else {
            try finish(notification, state: "stored", transaction: nil,
                       error: "Google's answer names no product", runID: runID, on: connection)
            return .unknown
        }
        try connection.transaction {
            try TransactionStore.upsert([(record, nil)], runID: runID, on: connection)
            let changed = try PlayVoids.record(voids, runID: runID, on: connection)
            if notingJudgements {
                try connection.execute(
                    ReceiverSQL.noteTransactions,
                    ["transaction_ids": Array(Set([record.transactionID] + changed + orders)).sorted(),
                     "grace_seconds": grace])
            }
            try finish(notification, state: "applied", transaction: record.transactionID, error: nil, runID: runID,
                       on: connection)
        }
        return .applied
    }

    /// The white row of Google's answer: the order Google names (a subscription's latest charge),
    /// with the purchase's own time and product when the table holds the order already (an upload's
    /// signed purchaseData), else the answer's (when it was paid; a subscription renewal's order,
    /// `..N`, when the notification says it happened). Nil when neither names a product.
    private func whiteRow(_ observed: PlayObservedState, of notification: Claimed, on connection: Connection) throws
        -> AppleTransactionRecord?
    {
        let token = notification.purchaseToken
        let transactionID = observed.orderID ?? token
        let existing = try connection.queryFirst(PlayReceiverSQL.whiteRow, ["transaction_id": transactionID])
        guard let productID = try existing?.decode(String.self, "product_id") ?? observed.productID else { return nil }
        let original = observed.orderID.map(PlayPurchaseData.originalOrderID(of:)) ?? token
        let renewal = observed.subscription && original != transactionID
        let existingType = try existing?.decode(String?.self, "product_type") ?? nil
        let purchased =
            try existing?.decode(Date.self, "purchase_date")
            ?? (renewal ? notification.when : observed.paidAt) ?? observed.paidAt ?? notification.when
            ?? observed.observedAt
        var record = AppleTransactionRecord(
            transactionID: transactionID, originalTransactionID: original, productID: productID,
            productType: observed.subscription ? "auto_renewable" : existingType,
            bundleID: notification.packageName, environment: .production, quantity: observed.quantity ?? 1,
            purchaseDate: purchased, expiresDate: observed.expiresAt, signedDate: observed.observedAt,
            source: .playAPI)
        record.store = .googlePlay
        record.purchaseToken = token
        record.apply(observed)
        return record
    }

    /// The voids Google's voided-purchases list holds for the notification's token (and its order,
    /// when it names one), from a day before the notification's event: what the notification says
    /// is only recorded as Google's list confirms it. Nil when the list could not be read now.
    private func confirmedVoids(of notification: Claimed, api: PlayDeveloperAPIClient, logger: Logger) async throws
        -> [PlayVoid]?
    {
        let now = Date()
        // Google keeps voids 30 days and filters the list on when it saw the void.
        let start = max(
            (notification.when ?? now).addingTimeInterval(-86_400), now.addingTimeInterval(-30 * 86_400 + 3600))
        var found: [PlayVoid] = []
        let outcome = try await api.allVoidedPurchases(
            packageName: notification.packageName, query: .init(startTime: start), logger: logger
        ) { page in
            for voided in page where voided.purchaseToken == notification.purchaseToken {
                if let order = notification.orderID, let listed = voided.orderId, listed != order { continue }
                // The list's own reading of a void, as the nightly sync keeps it.
                if let void = PlayVoid(listed: voided, packageName: notification.packageName) { found.append(void) }
            }
        }
        switch outcome {
        case .found: return found
        case .notFound, .gone: return []
        case .rejected(let status, let reason):
            logger.notice("Google refused the voided-purchases list", metadata: [
                "google.http_status": "\(status)", "reason": "\(reason)",
            ])
            return nil
        case .retryLater(let reason, _):
            logger.notice("Google's voided-purchases list could not be read now", metadata: ["reason": "\(reason)"])
            return nil
        }
    }

    private func finish(
        _ notification: Claimed, state: String, transaction: String?, error: String?, runID: Int64,
        on connection: Connection
    ) throws {
        try connection.execute(
            PlayReceiverSQL.finish,
            ["id": notification.id, "state": state, "transaction_id": transaction, "error": error, "run_id": runID])
    }

    private func postponeAfterFailure(_ notification: Claimed, reason: String, on connection: Connection) throws {
        let wait = min(3600, timing.firstRetrySeconds * pow(2, Double(min(notification.attempts, 12))))
        try postpone([notification.id], error: reason, seconds: wait, counted: true, on: connection)
        logger.notice(
            "Google could not answer about a Play notification; asked again later",
            metadata: [
                "play.message_id": "\(notification.messageID)", "reason": "\(reason)",
                "retry_in_seconds": "\(Int(wait))",
            ])
    }

    private func postpone(_ ids: [Int64], error: String?, seconds: Double, counted: Bool, on connection: Connection)
        throws
    {
        guard !ids.isEmpty else { return }
        try connection.execute(
            PlayReceiverSQL.postpone, ["ids": ids, "error": error, "retry_seconds": seconds, "counted": counted])
    }
}
