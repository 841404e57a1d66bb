import Foundation
import GooglePlay
import Logging
import Postgres

/// Google's Orders API for Play ledger order ids no verified source holds (SPEC section 18,
/// `unverified_delivery`): the Play counterpart of Get Transaction Info (`ServerAPILookups`), with
/// its candidates (`sql/serverapi/transaction_info_candidates.sql` for store `google_play`, once
/// every upload of the delivery's account is verified) and its answers
/// (`reconcile.transaction_lookups`: found, not_found, or retry for the next run). A found order's
/// purchase token is asked its state today (`PlayUploadVerifier.ask`) and the white row stored
/// (source `play_api`, bound by `obfuscatedExternalAccountId`), so the diff judges it like an
/// uploaded purchase: a refunded one credited is a `refunded_delivery`, a paid one credited to its
/// buyer nothing. Orders calls count against a daily quota (200,000 by default,
/// https://developers.google.com/android-publisher/api-ref/rest/v3/orders): only these ids are asked.
/// One `orders.get` per id, not `orders:batchGet`: a batch fails whole when any of its ids is not
/// found or not the package's (https://developers.google.com/android-publisher/api-ref/rest/v3/orders/batchget),
/// and these candidates are exactly the ids Google may not know (a forged or mistyped ledger row),
/// asked of every configured package in turn.
struct PlayOrderLookups: Sendable {
    let api: PlayDeveloperAPIClient
    let services: PlayServices
    /// The operator's relations (the ledger and the uploads the candidates are read from).
    var relations: Differ.Relations = .standard

    init(api: PlayDeveloperAPIClient, services: PlayServices, relations: Differ.Relations = .standard) {
        self.api = api
        self.services = services
        self.relations = relations
    }

    /// Calls in a row Google did not answer after which the run stops asking: what was asked is
    /// kept, the rest waits for the next run (the run is `completed_with_unresolved`).
    static let outageThreshold = 20

    func run(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {
        let packages = services.settings.packageNames
        guard !packages.isEmpty else { return }
        let ledgerChangesAfter = try RunLedger.ledgerChangesAfter(run)
        var outage = 0
        var after = ""
        while outage < Self.outageThreshold {
            try Task.checkCancellation()
            let candidates = try run.connection.query(
                ServerAPILookups.SQL.transactionInfoCandidates,
                ["since": run.since ?? Date.distantPast, "bundle_ids": packages, "after": after,
                 "ledger_changes_after": ledgerChangesAfter, "unconfirmed_kinds": FindingKind.unconfirmedKinds,
                 "store": Store.googlePlay.rawValue, "users_verified": true],
                relations: ["deliveries": relations.deliveries, "uploads": relations.uploads]
            ).map { (try $0.decode(String.self, at: 0), try $0.decode(Date.self, at: 1)) }
            guard let last = candidates.last else { return }
            after = last.0
            try await lookUp(
                candidates, runID: run.id, judgeBefore: run.judgeBefore, database: .holding(run.connection),
                into: &summary, outage: &outage)
        }
        services.logger.warning(
            "Google's Orders API did not answer many calls in a row: the rest is asked next run",
            metadata: ["unanswered": "\(outage)"])
    }

    /// What Google said of one order id.
    enum Answer: Sendable {
        /// The order, with its white row (nil when the answer cannot be stored).
        case found(PlayOrder, package: String, record: AppleTransactionRecord?)
        /// No configured package knows it.
        case notFound
        /// Not answered now, with why.
        case retry(String)

        var isFound: Bool {
            if case .found = self { true } else { false }
        }
    }

    /// Asks `orders.get` about each candidate and records the answer, each in a short step of its
    /// own: no connection is held while Google is asked. A fresh order can be unknown for a while:
    /// not found is judged only once the delivery is older than the grace (`judgeBefore`).
    func lookUp(
        _ candidates: [(String, Date)], runID: Int64, judgeBefore: Date, database: ConnectionLender,
        into summary: inout PlayRunSummary, outage: inout Int
    ) async throws {
        for (orderID, deliveredAt) in candidates {
            try Task.checkCancellation()
            guard outage < Self.outageThreshold else { return }
            summary.ordersAsked += 1
            let answer = try await ask(orderID)
            if case .retry = answer {
                outage += 1
                summary.ordersUnanswered += 1
            } else {
                outage = 0
            }
            try await database.run { [self] connection in
                try connection.transaction {
                    _ = try record(
                        answer, orderID: orderID, deliveredAt: deliveredAt, runID: runID, judgeBefore: judgeBefore,
                        on: connection)
                }
            }
        }
    }

    /// Stores an answer: a found order's white row, and for a delivered one the lookup's result
    /// (`reconcile.transaction_lookups`, as Get Transaction Info's: the diff's
    /// `unverified_delivery` waits for not_found, a retry is asked again next run). Returns the
    /// result recorded (nil when nothing delivered it, so nothing waits for the answer).
    func record(
        _ answer: Answer, orderID: String, deliveredAt: Date?, runID: Int64, judgeBefore: Date, on connection: Connection
    ) throws -> String? {
        var result = "retry"
        var error: String?
        switch answer {
        case .found(_, _, let record):
            result = "found"
            if let record { try TransactionStore.upsert([(record, nil)], runID: runID, on: connection) }
        case .notFound:
            // A fresh order can be unknown for a while: judged only once older than the grace.
            result = (deliveredAt ?? .distantFuture) <= judgeBefore ? "not_found" : "retry"
        case .retry(let reason):
            error = reason.escapingNUL
        }
        guard deliveredAt != nil else { return nil }
        try connection.execute(
            ServerAPILookups.SQL.transactionInfoAnswer,
            ["transaction_id": orderID, "result": result, "last_error": error, "run_id": runID])
        return result
    }

    /// `orders.get` for one order id, then its purchase token's state. The ledger row names no
    /// package (`orders.get` needs one in its path): each configured package
    /// (`GOOGLE_PLAY_PACKAGE_NAMES`, in order) is asked until one knows the order; not found means
    /// none did. Any package that could not answer now makes the whole answer a retry, unless
    /// another found it. A configuration Google refuses (401, 403) stops the run.
    func ask(_ orderID: String) async throws -> Answer {
        let logger = services.logger
        var unanswered: String?
        for package in services.settings.packageNames {
            let outcome: PlayAPIOutcome<PlayOrder>
            do {
                outcome = try await api.order(packageName: package, orderID: orderID, logger: logger)
            } catch let error as PlayAPIConfigurationError {
                throw RunConfigurationError("Google Play Developer API: \(error)")
            }
            switch outcome {
            case .found(let order):
                return try await found(order, asked: orderID, package: package)
            case .notFound, .gone:
                continue
            case .rejected(let status, let reason):
                // An id Google cannot read as one of its orders (400): this package does not know it.
                logger.notice("orders.get refused the order id", metadata: ["http.status": "\(status)", "reason": "\(reason)"])
                continue
            case .retryLater(let reason, _):
                unanswered = reason
            }
        }
        return unanswered.map { .retry($0) } ?? .notFound
    }

    /// A found order with its token's state today: the white row.
    private func found(_ order: PlayOrder, asked orderID: String, package: String) async throws -> Answer {
        let now = Date()
        guard var record = AppleTransactionRecord(order: order, asked: orderID, package: package, at: now) else {
            return .retry("orders.get answered an order without a product")
        }
        if let token = order.purchaseToken {
            switch try await PlayUploadVerifier.askInRun(
                api, packageName: package, token: token, subscription: record.productType == "auto_renewable",
                logger: services.logger)
            {
            case .state(let observed):
                record.apply(observed, to: order, at: now)
            case .unknownToGoogle, .noLongerKept:
                break
            case .retry(let reason):
                return .retry(reason)
            }
        }
        return .found(order, package: package, record: record.fieldHoldingNUL == nil ? record : nil)
    }

    /// An amount in milliunits of its currency.
    static func milli(_ money: PlayOrder.Money) -> Int64 {
        (money.units ?? 0) * 1000 + Int64((money.nanos ?? 0) / 1_000_000)
    }
}

extension AppleTransactionRecord {
    /// An order as `orders.get` answered it (`asked` when the answer names no id), before its
    /// token's state is known: when it was charged, its product and price, and what the order alone
    /// says (pending, refunded or cancelled), for a token Google no longer answers about. Nil for an
    /// order without a product.
    init?(order: PlayOrder, asked orderID: String, package: String, at now: Date) {
        guard let item = order.lineItems.first, let product = item.productId, !product.isEmpty else { return nil }
        self.init(
            transactionID: order.orderId ?? orderID,
            originalTransactionID: PlayPurchaseData.originalOrderID(of: order.orderId ?? orderID),
            productID: product, productType: item.isSubscription ? "auto_renewable" : nil, bundleID: package,
            environment: .production, quantity: item.quantity ?? 1, purchaseDate: order.createDate ?? now,
            priceMilli: item.total.map { PlayOrderLookups.milli($0) }, currency: item.total?.currencyCode,
            signedDate: now, source: .playAPI)
        store = .googlePlay
        purchaseToken = order.purchaseToken
        pending = order.state == "PENDING"
        if order.isRefunded || order.state == "CANCELED" { revocationDate = now }
    }

    /// The order's token's state as the Developer API answered it, over what the order alone said.
    /// A subscription's token is paid while Google keeps it; a renewal's own refund is the order's
    /// (its voids come by the voided list too).
    mutating func apply(_ observed: PlayObservedState, to order: PlayOrder, at now: Date) {
        revocationDate = nil
        apply(observed)
        if productType == "auto_renewable", order.isRefunded, revocationDate == nil { revocationDate = now }
    }
}
