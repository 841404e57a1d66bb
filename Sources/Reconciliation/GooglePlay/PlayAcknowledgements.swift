import Foundation
import GooglePlay
import Logging
import Postgres

/// The acknowledgement rescue (SPEC section 18, `RECONCILE_PLAY_ACKNOWLEDGE=on`): Google refunds a
/// purchase nobody acknowledged within three days (`voidedReason` 8), after the app gave the goods
/// when its own acknowledge failed. A paid purchase the ledger delivered to its buyer that Google
/// still reports unacknowledged is acknowledged by the job, so the customer keeps the goods and the
/// app the money. A purchase not delivered (or delivered to another account, or whose buyer is
/// unknown) is never acknowledged.
///
/// Set-based and in batches of tokens: the candidates are Play rows not acknowledged, paid and not
/// settled before (`sql/play/acknowledgement_candidates.sql`); the diff's own rules judge their
/// orders (`Differ.computeFindings` over exactly them) and `sql/play/acknowledgement_delivered.sql`
/// keeps those delivered to their buyer. Each is asked of Google first (`PlayUploadVerifier.ask`):
/// acknowledged already is only recorded; still unacknowledged and paid, it is acknowledged. What
/// Google answered for good is kept once per token in `reconcile.play_acknowledgements`; a Google
/// that could not answer (5xx, timeouts) leaves the purchase for the next run; 401/403 stops the run.
struct PlayAcknowledgements: Sendable {
    let api: PlayDeveloperAPIClient
    let services: PlayServices
    /// The operator's relations the diff reads (`Settings.relations`).
    var relations: Differ.Relations = .standard

    /// Tokens per batch: what one transaction judges and one round of API calls asks.
    static let batchSize = 200
    /// API calls in flight at once (the client paces them to `GOOGLE_PLAY_API_RATE`).
    static let width = 8

    init(api: PlayDeveloperAPIClient, services: PlayServices, relations: Differ.Relations = .standard) {
        self.api = api
        self.services = services
        self.relations = relations
    }

    /// One candidate token and the orders of it the ledger delivered to their buyer.
    struct Candidate: Sendable {
        var token: String
        var packageName: String
        var productID: String
        var subscription: Bool
        /// The first order delivered to its buyer.
        var orderID: String
    }

    /// What Google's answer settled for a token, as `reconcile.play_acknowledgements.outcome` keeps it.
    enum Outcome: String, Sendable {
        /// The job acknowledged it (counted in `"play": {"acknowledged"}`).
        case acknowledged
        /// Google held it acknowledged already (the app acknowledged it late): recorded, not counted.
        case alreadyAcknowledged = "already_acknowledged"
        /// Cancelled or refunded when asked, or the acknowledge answered 400 `productNotOwnedByUser`.
        case notOwned = "not_owned"
        /// 404: Google does not know the token.
        case notFound = "not_found"
        /// 410: Google no longer keeps the purchase.
        case gone
        /// Another refusal, with Google's reason.
        case rejected
    }

    /// What settling one token came to (a token Google could not answer for is not settled).
    struct Settled: Sendable {
        var candidate: Candidate
        var outcome: Outcome
        var detail: String? = nil
    }

    func run(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {
        let packages = services.settings.packageNames
        guard !packages.isEmpty else { return }
        var after = ""
        var asked = 0, left = 0
        while true {
            let (delivered, last) = try deliveredBatch(after: after, packages: packages, run: run)
            guard let last else { break }
            after = last
            let settled = try await settle(delivered, logger: run.logger)
            left += delivered.count - settled.count
            asked += delivered.count
            summary.acknowledged += try record(settled, run: run)
        }
        run.logger.info("play acknowledgements", metadata: [
            "play.asked": "\(asked)", "play.acknowledged": "\(summary.acknowledged)", "play.left_for_next_run": "\(left)",
        ])
    }

    /// The next batch of candidate tokens after `after`, and of them those the ledger delivered to
    /// their buyer; the batch's last token (nil when there is none left).
    func deliveredBatch(after: String, packages: [String], run: RunContext) throws -> ([Candidate], String?) {
        let connection = run.connection
        return try connection.transaction {
            let rows = try connection.query(
                Self.SQL.candidates, ["after": after, "batch": Self.batchSize, "packages": packages],
                relations: ["products": relations.products])
            guard !rows.isEmpty else { return ([], nil) }
            var orders: [String: [String]] = [:]
            var candidates: [Candidate] = []
            for row in rows {
                let token: String = try row["purchase_token"]
                let json: PostgresJSON = try row["transaction_ids"]
                let ids = try json.decode([String].self)
                orders[token] = ids
                candidates.append(Candidate(
                    token: token, packageName: try row["package_name"], productID: try row["product_id"],
                    subscription: try row["subscription"], orderID: ids[0]))
            }
            let last = candidates[candidates.count - 1].token
            var parameters = Differ.Parameters(
                runID: run.id, bundleIDs: [], environment: .production, judgeBefore: run.judgeBefore,
                scope: .transactions(orders.values.flatMap { $0 }), serverAPIEnabled: false, resumesAfter: run.resumesAfter)
            parameters.packageNames = packages
            try Differ(relations: relations).computeFindings(parameters, evidence: false, on: connection)
            let delivered = Set(try connection.query(Self.SQL.delivered).map { try $0.decode(String.self, at: 0) })
            let kept = candidates.compactMap { candidate -> Candidate? in
                guard let first = orders[candidate.token]?.first(where: delivered.contains) else { return nil }
                var candidate = candidate
                candidate.orderID = first
                return candidate
            }
            return (kept, last)
        }
    }

    /// Asks Google about each candidate and acknowledges those still unacknowledged and paid, a few
    /// at a time; returns what was settled for good (those Google could not answer are left out).
    func settle(_ candidates: [Candidate], logger: Logger) async throws -> [Settled] {
        var settled: [Settled] = []
        var next = candidates.makeIterator()
        try await withThrowingTaskGroup(of: Settled?.self) { group in
            for _ in 0..<Self.width {
                guard let candidate = next.next() else { break }
                group.addTask { try await settle(candidate, logger: logger) }
            }
            while let result = try await group.next() {
                if let result { settled.append(result) }
                if let candidate = next.next() {
                    group.addTask { try await settle(candidate, logger: logger) }
                }
            }
        }
        return settled
    }

    /// One token: Google's state now, then the acknowledge when it is still wanted.
    func settle(_ candidate: Candidate, logger: Logger) async throws -> Settled? {
        let state: PlayObservedState
        switch try await PlayUploadVerifier.askInRun(
            api, packageName: candidate.packageName, token: candidate.token, subscription: candidate.subscription,
            logger: logger)
        {
        case .state(let observed): state = observed
        case .unknownToGoogle: return Settled(candidate: candidate, outcome: .notFound)
        case .noLongerKept: return Settled(candidate: candidate, outcome: .gone)
        case .retry(let reason):
            logger.notice("play acknowledgement left for the next run", metadata: [
                "play.order": "\(candidate.orderID)", "reason": "\(reason)",
            ])
            return nil
        }
        if state.acknowledged { return Settled(candidate: candidate, outcome: .alreadyAcknowledged) }
        if state.cancelled || (state.quantity.map { state.refundedQuantity >= $0 } ?? false) {
            return Settled(candidate: candidate, outcome: .notOwned, detail: "cancelled or refunded when asked")
        }
        // Pending again by Google's word (the row said paid): nothing to acknowledge yet; ask again.
        guard state.paid else { return nil }
        let outcome: PlayAcknowledgeOutcome
        do {
            outcome = candidate.subscription
                ? try await api.acknowledgeSubscription(
                    packageName: candidate.packageName, subscriptionID: candidate.productID, token: candidate.token,
                    logger: logger)
                : try await api.acknowledgeProduct(
                    packageName: candidate.packageName, productID: candidate.productID, token: candidate.token,
                    logger: logger)
        } catch let error as PlayAPIConfigurationError {
            throw RunConfigurationError("Google Play Developer API: \(error)")
        }
        switch outcome {
        case .acknowledged: return Settled(candidate: candidate, outcome: .acknowledged)
        // https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products/acknowledge:
        // an acknowledged purchase answers 400 invalidPurchaseState (another client acknowledged it
        // between the question and the acknowledge), a refunded one 400 productNotOwnedByUser.
        case .alreadyAcknowledged: return Settled(candidate: candidate, outcome: .alreadyAcknowledged)
        case .notOwned: return Settled(candidate: candidate, outcome: .notOwned, detail: "productNotOwnedByUser")
        case .notFound: return Settled(candidate: candidate, outcome: .notFound)
        case .gone: return Settled(candidate: candidate, outcome: .gone)
        case .rejected(let status, let reason):
            return Settled(candidate: candidate, outcome: .rejected, detail: "HTTP \(status): \(reason)")
        case .retryLater(let reason, _):
            logger.notice("play acknowledgement left for the next run", metadata: [
                "play.order": "\(candidate.orderID)", "reason": "\(reason)",
            ])
            return nil
        }
    }

    /// Keeps what was settled (once per token) and marks the acknowledged tokens' white rows;
    /// returns how many the job itself acknowledged, each counted once.
    func record(_ settled: [Settled], run: RunContext) throws -> Int {
        guard !settled.isEmpty else { return 0 }
        let connection = run.connection
        let rows = try connection.transaction {
            try connection.query(Self.SQL.record, [
                "tokens": settled.map(\.candidate.token), "order_ids": settled.map(\.candidate.orderID),
                "packages": settled.map(\.candidate.packageName), "product_ids": settled.map(\.candidate.productID),
                "kinds": settled.map { $0.candidate.subscription ? "subscription" : "product" },
                "outcomes": settled.map(\.outcome.rawValue), "details": settled.map(\.detail), "run_id": run.id,
            ])
        }
        return try rows.filter { try $0.decode(String.self, at: 1) == Outcome.acknowledged.rawValue }.count
    }

    /// The statements, in `sql/play/`.
    enum SQL {
        static let candidates: SQLFile = "play/acknowledgement_candidates.sql"
        static let delivered: SQLFile = "play/acknowledgement_delivered.sql"
        static let record: SQLFile = "play/record_acknowledgements.sql"
    }
}
