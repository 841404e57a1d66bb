import AppStore
import Foundation
import GooglePlay
import Logging
import Postgres

/// Google Play's voided-purchases list (SPEC section 18), read every run (stage `play_voids`,
/// before verification) and by `reconcile notifications sync`, per package of
/// `GOOGLE_PLAY_PACKAGE_NAMES`:
///
/// 1. When the last read is older than the 30 days Google keeps voids, the voids in between are
///    lost: the run says so (`voided_gap`) and asks the API again about the package's purchases
///    bought in that gap (productsv2 / subscriptionsv2, as an upload's verification does, and a
///    subscription's order of orders.get, which alone tells of a refunded renewal), a batch
///    at a time.
/// 2. `purchases.voidedpurchases` (`type=1`, `includeQuantityBasedPartialRefund=true`, paged by
///    `token`) from the last read minus ``overlap`` (the first read: the whole 30 days) to now;
///    every void kept once and applied to the white rows (``PlayVoids``), and the watermark moved
///    in the transaction that records the last page. A crash, a Google that does not answer, or a
///    gap not yet repaired leaves the watermark where it was: the next read starts from there again.
/// 3. A void whose order has no white row (no upload held it) is looked up by its purchase token
///    and the order stored from Google's answer, so that a ledger credit of it is a
///    `refunded_delivery`, not an `unverified_delivery`.
///
/// A 401 or 403 stops the run (``RunConfigurationError``); 5xx, 429 and timeouts, once retried,
/// leave the package for the next read and the run goes on.
struct PlayVoidSync: Sendable {
    let api: PlayDeveloperAPIClient
    let services: PlayServices
    /// `maxResults` of each page (Google answers at most 1,000).
    var pageSize = 1000
    /// White rows asked of the API at once (a gap's purchases, the voided orders no upload held).
    var batchSize = 200

    init(api: PlayDeveloperAPIClient, services: PlayServices) {
        self.api = api
        self.services = services
    }

    /// How long Google keeps a void in the list.
    static let retention: TimeInterval = 30 * 86_400
    /// How far before the last read's end the next read starts. Google filters `startTime` and
    /// `endTime` on when its systems saw the purchase as voided, not on `voidedTimeMillis`
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list),
    /// and does not say how long a void takes to be listed once seen: a chargeback, a refund by
    /// Google's support, may come in late. Three days of voids are few (a void read again is the
    /// same key, dropped by ``PlayVoids``), so the overlap is generous rather than tight.
    static let overlap: TimeInterval = 3 * 86_400
    /// A start this much younger than 30 days ago: Google refuses an older `startTime`.
    static let startMargin: TimeInterval = 60
    /// An end this much before now: Google refuses an `endTime` later than its own clock, which
    /// this host's may be ahead of. The voids of the last minute are read by the next read.
    static let endMargin: TimeInterval = 60
    /// One read of the voided list at a time per database (an hourly sync and a run).
    static let lockKey: Int64 = 0x6961_7072_6563_0038

    /// The run's stage: every package, under the voided list's lock (waited for: a sync holding
    /// it finishes within its calls' retry budgets).
    func sync(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {
        try run.connection.advisoryLock(Self.lockKey)
        defer { _ = try? run.connection.advisoryUnlock(Self.lockKey) }
        for package in services.settings.packageNames {
            let outcome = try await sync(
                package: package, runID: run.id, now: Date(), on: run.connection, logger: run.logger)
            summary.add(outcome)
        }
    }

    /// Reads one package's voided list up to `now`; the caller holds ``lockKey``.
    func sync(package: String, runID: Int64, now: Date, on connection: Connection, logger: Logger) async throws
        -> PlayVoidedSyncOutcome
    {
        var logger = logger
        logger[metadataKey: "google.package"] = "\(package)"
        let last = try connection.queryFirst(SQL.syncLast, ["package_name": package])?.decode(Date.self, at: 0)
        let oldest = now.addingTimeInterval(-Self.retention + Self.startMargin)
        let start = max(last.map { $0.addingTimeInterval(-Self.overlap) } ?? oldest, oldest)
        let end = now.addingTimeInterval(-Self.endMargin)
        var outcome = PlayVoidedSyncOutcome(packageName: package, from: start, until: end)
        var gapRepaired = true
        if let last, last < oldest {
            // Voids Google saw between the last read and 30 days ago are gone from the list.
            outcome.gap = true
            logger.warning(
                "Google Play's voided list was last read over 30 days ago: asking the API about the gap's purchases",
                metadata: ["google.synced_until": "\(last)"])
            gapRepaired = try await repairGap(
                package: package, bought: last.addingTimeInterval(-Self.overlap)..<oldest, runID: runID,
                on: connection, logger: logger, into: &outcome)
        }
        try await readList(
            package: package, from: start, until: end, advancing: gapRepaired, runID: runID, on: connection,
            logger: logger, into: &outcome)
        try await storeVoidedOrders(
            package: package, now: now, runID: runID, on: connection, logger: logger, into: &outcome)
        logger.info("Google Play voided purchases read", metadata: [
            "google.voids_read": "\(outcome.voidsRead)", "google.voids_recorded": "\(outcome.voidsRecorded)",
            "google.pages": "\(outcome.pages)", "google.orders_stored": "\(outcome.ordersStored)",
        ])
        return outcome
    }

    // MARK: - The list

    private func readList(
        package: String, from start: Date, until end: Date, advancing: Bool, runID: Int64, on connection: Connection,
        logger: Logger, into outcome: inout PlayVoidedSyncOutcome
    ) async throws {
        // Each page is recorded when the next arrives; the last one in the transaction that moves
        // the watermark, so the watermark never runs ahead of what is stored.
        var held: [PlayVoid] = []
        var counts = PlayVoids.Recorded()
        var read = 0
        var malformed = 0
        let query = PlayDeveloperAPIClient.VoidedPurchasesQuery(startTime: start, endTime: end, maxResults: pageSize)
        let listed: PlayAPIOutcome<Int>
        do {
            listed = try await api.allVoidedPurchases(packageName: package, query: query, logger: logger) { page in
                let voids = page.compactMap { PlayVoid(listed: $0, packageName: package) }
                malformed += page.count - voids.count
                read += voids.count
                if !held.isEmpty {
                    let page = held
                    let recorded = try connection.transaction {
                        try PlayVoids.recordCounting(page, runID: runID, on: connection)
                    }
                    counts.add(recorded)
                }
                held = voids
            }
        } catch let error as PlayAPIConfigurationError {
            throw RunConfigurationError("Google Play Developer API: \(error)")
        }
        if malformed > 0 {
            logger.warning(
                "Google listed voids without a purchase token or time, left out",
                metadata: ["google.voids": "\(malformed)"])
        }
        let last = held
        switch listed {
        case .found(let pages):
            outcome.pages = pages
            let recorded = try connection.transaction {
                let recorded = try PlayVoids.recordCounting(last, runID: runID, on: connection)
                if advancing {
                    try connection.execute(
                        SQL.syncAdvance, ["package_name": package, "synced_until": end, "run_id": runID])
                }
                return recorded
            }
            counts.add(recorded)
        case .notFound, .gone, .rejected, .retryLater:
            if !last.isEmpty {
                let recorded = try connection.transaction {
                    try PlayVoids.recordCounting(last, runID: runID, on: connection)
                }
                counts.add(recorded)
            }
            let reason = Self.reason(listed)
            outcome.unanswered = reason
            logger.warning(
                "Google Play's voided list did not answer: the next read asks for the same span again",
                metadata: ["reason": "\(reason)"])
        }
        outcome.voidsRead = read
        outcome.voidsRecorded = counts.fresh
        outcome.voidedUnacknowledged = counts.unacknowledged
    }

    private static func reason(_ outcome: PlayAPIOutcome<Int>) -> String {
        switch outcome {
        case .found: return ""
        case .notFound: return "Google answered 404 for the package's voided purchases"
        case .gone: return "Google answered 410 for the package's voided purchases"
        case .rejected(let status, let reason): return "Google refused the request (\(status)): \(reason)"
        case .retryLater(let reason, _): return reason
        }
    }

    // MARK: - A gap of more than 30 days

    /// Asks the API again about the package's purchases bought in `bought` and not revoked, and
    /// stores what it says (a refund becomes a revocation, a partial one a refunded quantity).
    /// True when every one was answered.
    private func repairGap(
        package: String, bought: Range<Date>, runID: Int64, on connection: Connection, logger: Logger,
        into outcome: inout PlayVoidedSyncOutcome
    ) async throws -> Bool {
        var after = (date: bought.lowerBound, id: "")
        var answeredAll = true
        while true {
            let rows = try connection.query(SQL.gapPurchases, [
                "package_name": package, "bought_until": bought.upperBound, "after_date": after.date,
                "after": after.id, "limit": batchSize,
            ]).map { try GapPurchase(row: $0, packageName: package) }
            guard let lastRow = rows.last else { break }
            after = (lastRow.record.purchaseDate, lastRow.record.transactionID)
            // One question per token: a subscription's renewals share theirs.
            let tokens = Dictionary(rows.map { ($0.token, $0.subscription) }, uniquingKeysWith: { first, _ in first })
            let answers = try await ask(tokens, packageName: package, logger: logger)
            var records: [(AppleTransactionRecord, Carrier?)] = []
            for row in rows {
                outcome.gapPurchasesAsked += 1
                switch answers[row.token] {
                case .state(let observed):
                    var record = row.record
                    if row.subscription {
                        // subscriptionsv2 does not tell a refunded renewal (each renewal is an order
                        // of its own): the order's own state does.
                        switch try await order(row.record.transactionID, packageName: package, logger: logger) {
                        case .found(let order):
                            record.apply(observed, to: order, at: Date())
                        case .notFound, .gone, .rejected:
                            record.apply(observed)
                        case .retryLater(let reason, _):
                            answeredAll = false
                            logger.warning(
                                "Google did not answer about an order bought in the gap: the next read asks again",
                                metadata: ["transaction.id": "\(row.record.transactionID)", "reason": "\(reason)"])
                            continue
                        }
                    } else {
                        record.apply(observed)
                    }
                    records.append((record, nil))
                case .unknownToGoogle, .noLongerKept, nil:
                    break
                case .retry(let reason):
                    answeredAll = false
                    logger.warning(
                        "Google did not answer about a purchase bought in the gap: the next read asks again",
                        metadata: ["transaction.id": "\(row.record.transactionID)", "reason": "\(reason)"])
                }
            }
            if !records.isEmpty {
                try connection.transaction { try TransactionStore.upsert(records, runID: runID, on: connection) }
            }
            if rows.count < batchSize { break }
        }
        return answeredAll
    }

    /// `orders.get` for one order; Google refusing the service account stops the run.
    private func order(_ orderID: String, packageName: String, logger: Logger) async throws -> PlayAPIOutcome<PlayOrder> {
        do {
            return try await api.order(packageName: packageName, orderID: orderID, logger: logger)
        } catch let error as PlayAPIConfigurationError {
            throw RunConfigurationError("Google Play Developer API: \(error)")
        }
    }

    private func ask(_ tokens: [String: Bool], packageName: String, logger: Logger) async throws
        -> [String: PlayUploadVerifier.Answer]
    {
        let api = api
        return try await withThrowingTaskGroup(of: (String, PlayUploadVerifier.Answer).self) { group in
            for (token, subscription) in tokens {
                group.addTask {
                    (token, try await PlayUploadVerifier.askInRun(
                        api, packageName: packageName, token: token, subscription: subscription, logger: logger))
                }
            }
            var answers: [String: PlayUploadVerifier.Answer] = [:]
            for try await (token, answer) in group { answers[token] = answer }
            return answers
        }
    }

    // MARK: - Voided orders no upload held

    /// Looks up, by purchase token, the orders of the package's recorded voids that have no white
    /// row, and stores them from Google's answer (source `play_voided`, the purchase's binding);
    /// ``TransactionStore`` applies their voids. An order Google does not answer about now is
    /// looked up again by the next read, while its void is younger than 30 days.
    private func storeVoidedOrders(
        package: String, now: Date, runID: Int64, on connection: Connection, logger: Logger,
        into outcome: inout PlayVoidedSyncOutcome
    ) async throws {
        var after = ""
        while true {
            let rows = try connection.query(SQL.voidsWithoutRows, [
                "package_name": package, "recorded_since": now.addingTimeInterval(-Self.retention), "after": after,
                "limit": batchSize,
            ]).map { try VoidedOrder(row: $0) }
            guard let lastRow = rows.last else { break }
            after = lastRow.orderID
            let answers = try await lookUp(Set(rows.map(\.purchaseToken)), packageName: package)
            var records: [(AppleTransactionRecord, Carrier?)] = []
            for order in rows {
                switch answers[order.purchaseToken] {
                case .product(let product, let at):
                    if let record = AppleTransactionRecord(
                        voided: order, packageName: package, product: product, at: at)
                    {
                        records.append((record, nil))
                    }
                case .subscription(let subscription, let at):
                    if let record = AppleTransactionRecord(
                        voided: order, packageName: package, subscription: subscription, at: at)
                    {
                        records.append((record, nil))
                    }
                case .unknown, nil:
                    logger.info(
                        "Google does not know a voided order's purchase token",
                        metadata: ["transaction.id": "\(order.orderID)"])
                case .retry(let reason):
                    logger.warning(
                        "Google did not answer about a voided order no upload holds: the next read asks again",
                        metadata: ["transaction.id": "\(order.orderID)", "reason": "\(reason)"])
                }
            }
            if !records.isEmpty {
                try connection.transaction { try TransactionStore.upsert(records, runID: runID, on: connection) }
                outcome.ordersStored += records.count
            }
            if rows.count < batchSize { break }
        }
    }

    /// What Google says of a voided order's token.
    enum TokenAnswer: Sendable {
        case product(ProductPurchaseV2, at: Date)
        case subscription(SubscriptionPurchaseV2, at: Date)
        case unknown
        case retry(String)
    }

    private func lookUp(_ tokens: Set<String>, packageName: String) async throws -> [String: TokenAnswer] {
        let api = api
        let logger = services.logger
        return try await withThrowingTaskGroup(of: (String, TokenAnswer).self) { group in
            for token in tokens {
                group.addTask {
                    (token, try await Self.lookUp(token, packageName: packageName, api: api, logger: logger))
                }
            }
            var answers: [String: TokenAnswer] = [:]
            for try await (token, answer) in group { answers[token] = answer }
            return answers
        }
    }

    /// productsv2 first; a token it does not know as a one-time product's (404, or a 400 refusing
    /// the token) is asked of subscriptionsv2. The voided list does not say which kind a void is
    /// (`VoidedPurchase` has no product type,
    /// https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases),
    /// and Google's reference does not say what productsv2 answers for a subscription's token.
    static func lookUp(_ token: String, packageName: String, api: PlayDeveloperAPIClient, logger: Logger) async throws
        -> TokenAnswer
    {
        do {
            switch try await api.productPurchase(packageName: packageName, token: token, logger: logger) {
            case .found(let product): return .product(product, at: Date())
            case .gone: return .unknown
            case .retryLater(let reason, _): return .retry(reason)
            case .notFound, .rejected: break
            }
            switch try await api.subscriptionPurchase(packageName: packageName, token: token, logger: logger) {
            case .found(let subscription): return .subscription(subscription, at: Date())
            case .notFound, .gone, .rejected: return .unknown
            case .retryLater(let reason, _): return .retry(reason)
            }
        } catch let error as PlayAPIConfigurationError {
            throw RunConfigurationError("Google Play Developer API: \(error)")
        }
    }

    /// The statements, in `sql/play/`.
    enum SQL {
        static let syncLast: SQLFile = "play/sync_last.sql"
        static let syncAdvance: SQLFile = "play/sync_advance.sql"
        static let gapPurchases: SQLFile = "play/gap_purchases.sql"
        static let voidsWithoutRows: SQLFile = "play/voids_without_rows.sql"
    }
}

/// What one read of a package's voided-purchases list did.
public struct PlayVoidedSyncOutcome: Sendable, Equatable {
    public var packageName: String
    /// The window asked (`startTime`, `endTime`).
    public var from: Date
    public var until: Date
    public var pages = 0
    /// Voids Google listed (a void read again in the overlap counts again).
    public var voidsRead = 0
    /// Voids no earlier read had.
    public var voidsRecorded = 0
    /// Of those, voids for want of an acknowledgement (`voidedReason` 8).
    public var voidedUnacknowledged = 0
    /// The last read was more than the 30 days Google keeps ago.
    public var gap = false
    /// Purchases bought in that gap asked of the API again.
    public var gapPurchasesAsked = 0
    /// Voided orders no upload held, stored from Google's answer about their token.
    public var ordersStored = 0
    /// Set when Google could not answer the list: the next read asks for the same span again.
    public var unanswered: String?

    public init(packageName: String, from: Date, until: Date) {
        self.packageName = packageName
        self.from = from
        self.until = until
    }
}

extension PlayRunSummary {
    mutating func add(_ outcome: PlayVoidedSyncOutcome) {
        voidedGap = voidedGap || outcome.gap
        voidsRecorded += outcome.voidsRecorded
        gapPurchasesAsked += outcome.gapPurchasesAsked
        voidedUnacknowledged += outcome.voidedUnacknowledged
    }
}

/// `reconcile notifications sync`'s Google Play part: the voided-purchases list of every package,
/// as a run reads it. It needs no run lock: it writes voids, which are kept once whoever reads
/// them, and white rows through the upsert a run, the receiver and the desk all use; the list has
/// its own lock (``PlayVoidSync/lockKey``) so that a sync and a run never read it at once. What it
/// writes is recorded under a run of kind `lookup` (dry, finished at once, as the desk's lookups
/// are): it moves no run's watermark, and its id is above the last nightly run's, so the next
/// nightly run judges every white row it changed.
public enum PlayVoidedSync {
    /// What the sync did.
    public struct Report: Sendable, Equatable {
        public var packages: [PlayVoidedSyncOutcome] = []
        /// Another sync, or a run, held the list's lock: nothing was read.
        public var locked = false
    }

    /// Reads every package's voided list; nil when Play is off or has no service account.
    public static func sync(settings: Settings, logger: Logger, on connection: Connection, now: Date = Date())
        async throws -> Report?
    {
        guard settings.googlePlay.apiEnabled else { return nil }
        return try await GooglePlayServices.withServices(settings: settings, logger: logger) { services in
            guard let services, let api = services.api else { return nil }
            guard try connection.tryAdvisoryLock(PlayVoidSync.lockKey) else { return Report(locked: true) }
            defer { _ = try? connection.advisoryUnlock(PlayVoidSync.lockKey) }
            let runID = try LookupRun().id(environment: settings.environment, on: connection)
            let sync = PlayVoidSync(api: api, services: services)
            var report = Report()
            for package in settings.googlePlay.packageNames {
                let outcome = try await sync.sync(
                    package: package, runID: runID, now: now, on: connection, logger: logger)
                report.packages.append(outcome)
            }
            return report
        }
    }
}

// MARK: - Rows

extension PlayVoid {
    /// A void as the voided-purchases list gives it; nil without a token or a time (nothing to key it by).
    init?(listed voided: VoidedPurchase, packageName: String) {
        guard let token = voided.purchaseToken, !token.isEmpty, let voidedMillis = voided.voidedTimeMillis else {
            return nil
        }
        self.init(
            orderID: voided.orderId.flatMap { $0.isEmpty ? nil : $0 } ?? token, purchaseToken: token,
            packageName: packageName, voidedAt: Date(timeIntervalSince1970: Double(voidedMillis) / 1000),
            purchasedAt: voided.purchaseTimeMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) },
            voidedQuantity: voided.voidedQuantity, voidedReason: voided.voidedReason?.rawValue,
            voidedSource: voided.voidedSource?.rawValue)
    }
}

/// A white row bought in a voided-list gap, to ask the API about again.
struct GapPurchase {
    var record: AppleTransactionRecord
    var token: String
    var subscription: Bool

    init(row: Row, packageName: String) throws {
        let productType = try row.decode(String?.self, at: 3)
        record = AppleTransactionRecord(
            transactionID: try row.decode(String.self, at: 0),
            originalTransactionID: try row.decode(String.self, at: 1),
            productID: try row.decode(String.self, at: 2), productType: productType, bundleID: packageName,
            environment: AppStoreEnvironment(rawValue: try row.decode(String.self, at: 4)),
            quantity: try row.decode(Int.self, at: 5), purchaseDate: try row.decode(Date.self, at: 6), source: .playAPI)
        token = try row.decode(String.self, at: 7)
        record.store = .googlePlay
        record.purchaseToken = token
        subscription = productType == "auto_renewable"
    }
}

/// A recorded void whose order has no white row.
struct VoidedOrder {
    var orderID: String
    var purchaseToken: String
    var purchasedAt: Date?
    var voidedAt: Date

    init(row: Row) throws {
        orderID = try row.decode(String.self, at: 0)
        purchaseToken = try row.decode(String.self, at: 1)
        purchasedAt = try row.decode(Date?.self, at: 2)
        voidedAt = try row.decode(Date.self, at: 3)
    }
}

extension AppleTransactionRecord {
    /// A voided one-time order no upload held, as productsv2 answers its token at `at`.
    init?(voided order: VoidedOrder, packageName: String, product: ProductPurchaseV2, at: Date) {
        guard let productID = product.productLineItem?.lazy.compactMap(\.productId).first else { return nil }
        self.init(
            transactionID: order.orderID, originalTransactionID: PlayPurchaseData.originalOrderID(of: order.orderID),
            productID: productID, bundleID: packageName, environment: .production, quantity: product.quantity,
            purchaseDate: order.purchasedAt ?? product.completionDate ?? order.voidedAt, source: .playVoided)
        store = .googlePlay
        purchaseToken = order.purchaseToken
        apply(PlayObservedState(product, at: at))
        source = .playVoided
    }

    /// A voided subscription order (the first or a renewal) no upload held, as subscriptionsv2
    /// answers its token at `at`.
    init?(voided order: VoidedOrder, packageName: String, subscription: SubscriptionPurchaseV2, at: Date) {
        guard let productID = subscription.lineItems?.lazy.compactMap(\.productId).first else { return nil }
        self.init(
            transactionID: order.orderID, originalTransactionID: PlayPurchaseData.originalOrderID(of: order.orderID),
            productID: productID, productType: "auto_renewable", bundleID: packageName, environment: .production,
            purchaseDate: order.purchasedAt ?? subscription.startDate ?? order.voidedAt, source: .playVoided)
        store = .googlePlay
        purchaseToken = order.purchaseToken
        apply(PlayObservedState(subscription, at: at))
        source = .playVoided
    }
}
