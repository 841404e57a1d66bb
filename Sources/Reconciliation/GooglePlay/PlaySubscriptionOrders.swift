import Foundation
import GooglePlay
import Logging
import Postgres

/// A Google Play subscription's orders (SPEC section 18: each renewal an order of its own,
/// `GPA.…..0`, `..1`, …, its original the order id without the suffix). Google charges renewals
/// in the background: the device may never upload one and the app's server may never credit it,
/// and the only answer that names it is subscriptionsv2's latest order. Every order from the first
/// to the latest that the white table lacks is asked of `orders.get` (when it was charged, whether
/// it was refunded) and stored with the token's state as subscriptionsv2 answered it, so that a
/// renewal nobody uploaded or credited is judged (a `missed_delivery` once its grace has passed)
/// whichever run or receiver pass learns of it, and dated by Google's order, not by when the job
/// learnt of it. `orders.get` is asked only for orders the table lacks: once per order.
struct PlaySubscriptionOrders: Sendable {
    let api: PlayDeveloperAPIClient
    let logger: Logger

    /// Renewals past this many are not inferred (a malformed suffix, not a subscription's life).
    static let maximumRenewals = 1_000

    /// The orders of the subscription whose latest order is `latest`: its first, then renewals
    /// `..0` to `latest`'s own. Only `latest` for a first order or an id without a renewal suffix.
    static func orderIDs(upTo latest: String) -> [String] {
        let first = PlayPurchaseData.originalOrderID(of: latest)
        guard first != latest, let last = Int(latest.dropFirst(first.count + 2)), last < maximumRenewals else {
            return [latest]
        }
        return [first] + (0...last).map { "\(first)..\($0)" }
    }

    /// What storing a subscription's orders came to.
    enum Outcome: Sendable, Equatable {
        /// The orders stored (none when the table held them all).
        case stored([String])
        /// Google could not answer for one of them now: the rest waits for the next ask.
        case retry(String)
    }

    /// Stores the orders up to `latest` of `token` that the white table lacks. An order Google
    /// does not know, or knows as another token's, is left out. Google refusing the service account
    /// (401, 403) is thrown as the ``PlayAPIConfigurationError`` it is, for the caller to say.
    func storeMissing(
        upTo latest: String, token: String, package: String, observed: PlayObservedState, runID: Int64,
        on connection: Connection
    ) async throws -> Outcome {
        let ids = Self.orderIDs(upTo: latest)
        let known = Set(try connection.query(Self.knownOrders, ["order_ids": ids]).map { try $0.decode(String.self, at: 0) })
        var records: [AppleTransactionRecord] = []
        for id in ids where !known.contains(id) {
            try Task.checkCancellation()
            switch try await api.order(packageName: package, orderID: id, logger: logger) {
            case .found(let order):
                let now = Date()
                guard order.purchaseToken == nil || order.purchaseToken == token,
                      var record = AppleTransactionRecord(order: order, asked: id, package: package, at: now)
                else { continue }
                record.purchaseToken = token
                record.apply(observed, to: order, at: now)
                if record.fieldHoldingNUL == nil { records.append(record) }
            case .notFound, .gone, .rejected:
                continue
            case .retryLater(let reason, _):
                return .retry(reason)
            }
        }
        if !records.isEmpty { try TransactionStore.upsert(records.map { ($0, nil) }, runID: runID, on: connection) }
        return .stored(records.map(\.transactionID))
    }

    static let knownOrders: SQLFile = "play/known_orders.sql"
}

/// Every run, after verification: each Google Play subscription whose period, as Google last said
/// it, has ended by the run's end (or that no run asked about yet) is asked of subscriptionsv2
/// again, and its orders up to the latest are stored (``PlaySubscriptionOrders``); what Google said
/// is kept in `reconcile.play_subscriptions`, and a subscription that is over (its period ended
/// and Google will not renew it, or Google no longer knows the token) is not asked again. A chain
/// of nightly runs learns each renewal the night after it is charged; one run over the whole
/// history learns them all at once, with the same rows.
struct PlayRenewals: Sendable {
    let api: PlayDeveloperAPIClient
    let services: PlayServices

    /// Tokens asked per batch.
    static let batchSize = 200
    /// Tokens asked per run at most: the first run after an upgrade asks every subscription the job
    /// holds (at `GOOGLE_PLAY_API_RATE`, 20 a second by default, 100,000 of them would hold the
    /// night for 83 minutes); the rest is asked by the next runs, a token once asked leaving the
    /// candidates until its period ends.
    var maximumPerRun = 10_000
    /// Google's states after which a subscription whose period has ended will not renew.
    static let overStates: Set<String> = [
        "SUBSCRIPTION_STATE_EXPIRED", "SUBSCRIPTION_STATE_CANCELED", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED",
    ]

    func run(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {
        let packages = services.settings.packageNames
        guard !packages.isEmpty else { return }
        let orders = PlaySubscriptionOrders(api: api, logger: services.logger)
        var after = ""
        var outage = 0
        var askedThisRun = 0
        while outage < PlayOrderLookups.outageThreshold {
            guard askedThisRun < maximumPerRun else {
                services.logger.notice(
                    "Google Play subscriptions left to ask next run: this run asked its most",
                    metadata: ["asked": "\(askedThisRun)"])
                return
            }
            try Task.checkCancellation()
            let due = try run.connection.query(
                Self.candidates,
                ["package_names": packages, "until": run.until, "after": after, "limit": Self.batchSize]
            ).map { (token: try $0.decode(String.self, at: 0), package: try $0.decode(String.self, at: 1)) }
            guard let last = due.last else { return }
            after = last.token
            for subscription in due {
                guard outage < PlayOrderLookups.outageThreshold, askedThisRun < maximumPerRun else { break }
                askedThisRun += 1
                summary.subscriptionsAsked += 1
                switch try await PlayUploadVerifier.askInRun(
                    api, packageName: subscription.package, token: subscription.token, subscription: true,
                    logger: services.logger)
                {
                case .state(let observed):
                    var outcome = PlaySubscriptionOrders.Outcome.stored([])
                    if let latest = observed.orderID {
                        do {
                            outcome = try await orders.storeMissing(
                                upTo: latest, token: subscription.token, package: subscription.package,
                                observed: observed, runID: run.id, on: run.connection)
                        } catch let error as PlayAPIConfigurationError {
                            throw RunConfigurationError("Google Play Developer API: \(error)")
                        }
                    }
                    guard case .stored(let stored) = outcome else {
                        outage += 1
                        continue
                    }
                    outage = 0
                    summary.renewalOrdersStored += stored.count
                    let over = (observed.expiresAt ?? .distantPast) <= run.until
                        && Self.overStates.contains(observed.subscriptionState ?? "")
                    try asked(subscription.token, subscription.package, observed: observed, ended: over, run)
                case .unknownToGoogle, .noLongerKept:
                    outage = 0
                    try asked(subscription.token, subscription.package, observed: nil, ended: true, run)
                case .retry:
                    outage += 1
                }
            }
        }
        services.logger.warning(
            "Google did not answer many subscription questions in a row: the rest is asked next run",
            metadata: ["unanswered": "\(outage)"])
    }

    private func asked(_ token: String, _ package: String, observed: PlayObservedState?, ended: Bool, _ run: RunContext)
        throws
    {
        try run.connection.execute(
            Self.recordAsked,
            ["purchase_token": token, "package_name": package, "latest_order_id": observed?.orderID,
             "expires_at": observed?.expiresAt, "state": observed?.subscriptionState, "ended": ended,
             "run_id": run.id])
    }

    static let candidates: SQLFile = "play/renewal_candidates.sql"
    static let recordAsked: SQLFile = "play/renewal_asked.sql"
}
