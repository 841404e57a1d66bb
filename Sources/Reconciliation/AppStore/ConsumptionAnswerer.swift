import AppStore
import Foundation
import Logging
import Postgres

/// Answers Apple's refund requests (`CONSUMPTION_REQUEST`) with Send Consumption Information V2,
/// from the delivery ledger (SPEC section 14). Opt-in (`RECONCILE_CONSUMPTION_ANSWERS=on`).
///
/// No consent, no answer: Apple requires `customerConsented` true, so only accounts the consent
/// relation says consented (and did not withdraw) are answered. One answer per transaction until
/// Apple decides (`REFUND` or `REFUND_DECLINED`): Apple re-sends a pending request with a new
/// UUID, which joins the open answer; a request after the decision is a new one. A request older
/// than 12 hours (from its `signedDate`), or one Apple decided before it was answered, is
/// recorded `expired` and never sent. Processes answering at once (the receiver, the hourly sync,
/// a run) take turns per transaction through a lease (`reconcile.consumption_leases`): one
/// sends, the others leave the request; no database transaction is open while Apple is called.
/// `reconcile.consumption_answers` is the audit.
public struct ConsumptionAnswerer: Sendable {
    /// What one pass did.
    public struct Summary: Sendable, Equatable {
        /// Answers Apple accepted.
        public var answered = 0
        /// Requests past their 12 hours, or Apple decided before they were answered: recorded and
        /// not sent.
        public var expired = 0
        /// Answers Apple refused for good.
        public var failed = 0
        /// Requests left for a later pass: no consent (yet), unknown buyer, Apple unreachable, or
        /// another process answering about the same transaction at that moment.
        public var waiting = 0

        public init() {}
    }

    /// Apple's deadline: "within 12 hours" of the request.
    public static let deadline: TimeInterval = 12 * 3600

    let client: AppStoreServerAPIClient
    let settings: Settings
    let logger: Logger

    /// Creates an answerer.
    public init(client: AppStoreServerAPIClient, settings: Settings, logger: Logger) {
        self.client = client
        self.settings = settings
        self.logger = logger
    }

    /// One pending request, as `reconcile.notifications_seen` holds it.
    struct Request {
        var uuid: UUID
        var transactionID: String
        var environment: AppStoreEnvironment
        var signedDate: Date
        var appAccountToken: UUID?
        /// The product the request's signed transaction names.
        var productID: String?
        /// Its type, as the request's signed transaction says (`auto_renewable`, …).
        var productType: String?
    }

    /// Answers every request not yet taken into account, oldest first.
    public func answerPending(now: Date = Date(), on connection: Connection) async throws -> Summary {
        var summary = Summary()
        let requests = try connection.query(SQL.pendingRequests, [:]).map {
            Request(
                uuid: try $0.decode(UUID.self, at: 0), transactionID: try $0.decode(String.self, at: 1),
                environment: AppStoreEnvironment(rawValue: try $0.decode(String.self, at: 2)), signedDate: try $0.decode(Date.self, at: 3),
                appAccountToken: try $0.decode(UUID?.self, at: 4), productID: try $0.decode(String?.self, at: 5),
                productType: try $0.decode(String?.self, at: 6))
        }
        for request in requests {
            try Task.checkCancellation()
            try await answer(request, now: now, on: connection, into: &summary)
        }
        return summary
    }

    /// How long a claim on a transaction lasts (claim_lease.sql): longer than one call to Apple
    /// with every retry it may make (`RECONCILE_MAX_ATTEMPTS` attempts of `RECONCILE_APPLE_TIMEOUT`
    /// each, the client's longest backoff between them, asked in both environments), so that no
    /// other process answers while this one may still be sending; a process that died mid-call
    /// leaves the request for only this long.
    var lease: Duration {
        .seconds(2 * Double(settings.maxAttempts) * (settings.appleTimeout + 10) + 60)
    }

    /// What to do with a request, decided under its lease.
    private enum Step {
        /// Recorded (expired, joined to the open answer) or left waiting: nothing to send.
        case done
        /// Apple gets this body, on the consent of this account.
        case send(ConsumptionRequest, account: String)
    }

    /// Claim, call, record (the outbox's pattern): the transaction is leased to this process in a
    /// statement of its own, what to send is decided in a short transaction, Apple is called with
    /// no transaction open (`idle_in_transaction_session_timeout` may end one that waits on
    /// Apple, and with it the record of what Apple was told), and the outcome is recorded in
    /// another. Another process holding the lease has the request in hand: it is left waiting.
    private func answer(_ request: Request, now: Date, on connection: Connection, into summary: inout Summary)
        async throws
    {
        let holder = UUID()
        let lease: SQLValues = ["transaction_id": request.transactionID, "holder": holder]
        guard
            try connection.queryFirst(SQL.claimLease, lease.merging([
                "held_by": "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)",
                "lease_seconds": NotificationForwarder.seconds(self.lease),
            ]) { $1 }) != nil
        else {
            summary.waiting += 1
            return
        }
        do {
            try await answerLeased(request, now: now, on: connection, into: &summary)
        } catch {
            // The session may be gone: then the lease runs out and a later pass takes the request.
            _ = try? connection.execute(SQL.releaseLease, lease)
            throw error
        }
        try connection.execute(SQL.releaseLease, lease)
    }

    private func answerLeased(_ request: Request, now: Date, on connection: Connection, into summary: inout Summary)
        async throws
    {
        let step = try connection.transaction { try prepare(request, now: now, on: connection, into: &summary) }
        guard case .send(let body, let account) = step else { return }
        let environment: AppStoreEnvironment = request.environment == .sandbox ? .sandbox : .production
        let outcome = try await client.sendConsumptionInformation(
            transactionId: request.transactionID, body, environment: environment, logger: logger)
        let sent = String(decoding: try AppStoreJSON.encoder().encode(body), as: UTF8.self)
        try connection.transaction {
            switch outcome {
            case .found(let status):
                summary.answered += 1
                try record(request, user: account, status: .answered, body: sent, http: status, error: nil, on: connection)
            case .notFound:
                summary.failed += 1
                try record(
                    request, user: account, status: .failed, body: sent, http: 404,
                    error: "4040010 transaction id not found", on: connection)
            case .rejected(let code, let reason):
                summary.failed += 1
                try record(
                    request, user: account, status: .failed, body: sent, http: code.map { $0 / 10_000 },
                    error: reason.escapingNUL, on: connection)
            case .retryLater(let reason, _, _):
                // Tried again by the next pass, while the 12 hours last.
                summary.waiting += 1
                logger.notice("consumption answer not accepted now", metadata: ["reason": "\(reason)"])
            case .unverifiable:
                summary.waiting += 1
            }
        }
    }

    /// Decides, under the lease and in the caller's transaction, what the request gets: recorded
    /// expired, joined to the answer Apple is still deciding, left waiting (no consent, unknown or
    /// disputed account), or an answer to send.
    private func prepare(_ request: Request, now: Date, on connection: Connection, into summary: inout Summary)
        throws -> Step
    {
        // Read pending before the lease: another process may have answered it since.
        guard try connection.queryFirst(SQL.requestTaken, ["uuid": request.uuid]) == nil else { return .done }
        // Apple's decisions close the answers requested before them, one recorded after its
        // decision arrived included (answered late, or while the decision was being stored): a
        // request after a decision is a new one, never joined to an answer Apple already decided.
        let decisions = try connection.query(SQL.decisions, ["transaction_id": request.transactionID]).map { row in
            let type = NotificationType(rawValue: try row.decode(String.self, at: 0))
            guard let outcome = ConsumptionAnswerRecord.Outcome(decision: type) else {
                throw PostgresError(kind: .decoding, message: "decisions.sql returned \(type), which decides no refund")
            }
            return (outcome: outcome, signedDate: try row.decode(Date.self, at: 1))
        }
        for decision in decisions {
            try NotificationLedger.closeAnswers(
                transactionID: request.transactionID, outcome: decision.outcome, signedDate: decision.signedDate,
                on: connection)
        }
        // Apple re-sends a request it is still waiting on with a new UUID: it joins the open answer.
        let joined = try connection.execute(
            SQL.joinOpenAnswer, ["transaction_id": request.transactionID, "uuid": request.uuid])
        guard joined == 0 else { return .done }
        // Apple decided before the request was answered (no consent then, or Apple unreachable):
        // nothing is sent, and the request is recorded expired with Apple's outcome.
        if let decision = decisions.first(where: { $0.signedDate >= request.signedDate }) {
            summary.expired += 1
            try record(request, user: nil, status: .expired, body: nil, http: nil, error: nil, on: connection)
            try NotificationLedger.closeAnswers(
                transactionID: request.transactionID, outcome: decision.outcome, signedDate: decision.signedDate,
                on: connection)
            return .done
        }
        if request.signedDate < now.addingTimeInterval(-Self.deadline) {
            summary.expired += 1
            try record(request, user: nil, status: .expired, body: nil, http: nil, error: nil, on: connection)
            return .done
        }
        guard let facts = try LedgerFacts.read(request, settings: settings, on: connection), facts.consented else {
            summary.waiting += 1
            return .done
        }
        return .send(facts.consumptionRequest(settings.consumption), account: facts.buyer)
    }

    private func record(
        _ request: Request, user: String?, status: ConsumptionAnswerRecord.Status, body: String?, http: Int?, error: String?,
        on connection: Connection
    ) throws {
        // A lease that ran out while Apple was slow may have let another process answer the same
        // request, or another request about the transaction, meanwhile: one answer is kept.
        guard try connection.queryFirst(SQL.requestTaken, ["uuid": request.uuid]) == nil else { return }
        if status == .answered,
            try connection.execute(SQL.joinOpenAnswer, ["transaction_id": request.transactionID, "uuid": request.uuid]) > 0
        {
            return
        }
        try connection.execute(SQL.recordAnswer, [
            "transaction_id": request.transactionID, "environment": request.environment.rawValue, "user_id": user,
            "uuid": request.uuid, "requested_at": request.signedDate, "status": status, "body": body, "http": http,
            "error": error,
        ])
    }
}

/// What the ledger says about a transaction Apple asks about.
struct LedgerFacts {
    /// The account whose consent counts (SPEC section 14): the one holding the delivery; for an
    /// undelivered purchase, the buyer bound by appAccountToken or applicationUsername.
    var buyer: String
    var consented: Bool
    var productType: String?
    /// `DELIVERED`, `UNDELIVERED_WRONG_ITEM` or `UNDELIVERED_OTHER`.
    var deliveryStatus: ConsumptionRequest.DeliveryStatus
    /// Milliunits of the delivered quantity used, when the ledger says.
    var consumedMilli: Int?

    /// The facts, or nil when no account's consent can count: the purchase is delivered to more
    /// than one account, or undelivered and bound to no account (an uploader alone is no proof
    /// of who paid), or who holds it is disputed between accounts: an open `wrong_account` or
    /// `shared_receipt` item says so, or, the account having consented, the nightly rules judging
    /// the purchase now find one (``disputedByTheRules(_:relations:settings:on:)``), or, for a
    /// purchase no run has put in the white table, its token or username binds another account
    /// than the one holding it. Call inside a transaction (the rules' work tables are emptied at
    /// its commit). The delivery status and the consumption are the transaction's, whichever account holds
    /// its unrevoked deliveries; for a non-consumable, a delivery of any transaction with the
    /// same original transaction counts (SPEC section 5: a restore is not a new purchase).
    static func read(_ request: ConsumptionAnswerer.Request, settings: Settings, on connection: Connection) throws
        -> LedgerFacts?
    {
        let relations = settings.relations
        // The transactions whose deliveries count (for a non-consumable, its restores too), with
        // the asked transaction's product and type.
        let family = try connection.query(
            ConsumptionAnswerer.SQL.family,
            [
                "transaction_id": request.transactionID, "product_id": request.productID,
                "product_type": request.productType,
            ],
            relations: ["products": relations.products])
        let transactionIDs = try family.map { try $0.decode(String.self, at: 0) }
        guard
            let row = try connection.queryFirst(
                ConsumptionAnswerer.SQL.ledgerFacts,
                [
                    "transaction_id": request.transactionID, "transaction_ids": transactionIDs,
                    "app_account_token": request.appAccountToken, "disputed_kinds": FindingKind.disputedKinds,
                ],
                relations: ["deliveries": relations.deliveries])
        else { return nil }
        let delivered: Bool = try row["delivered"]
        let disputed: Bool = try row["disputed"]
        let boundElsewhere: Bool = try row["bound_elsewhere"]
        let account: String? = delivered ? try row["holder"] : try row["bound_buyer"]
        guard let account, !disputed, !boundElsewhere else { return nil }
        let consent = settings.consumption.consentRelation
        let consented = try connection.queryFirst(
            ConsumptionAnswerer.SQL.consented, ["user_id": account], relations: ["consent": consent]) != nil
        // Disputed whether or not its item is in the queue yet: the receiver answers before it
        // judges, and a run's answers run beside its diff (SPEC section 14). Judged only when an
        // answer could go out (the request of an account without consent waits, and is tried
        // again every few minutes).
        if consented,
            try disputedByTheRules(transactionIDs, relations: relations, settings: settings, on: connection)
        {
            return nil
        }
        let product: String? = try family[0]["product_id"]
        // consumed_milli is optional in an operator's ledger.
        let ledger = try connection.query(
            try Self.hasColumn("consumed_milli", in: relations.deliveries, on: connection)
                ? ConsumptionAnswerer.SQL.ledgerConsumed : ConsumptionAnswerer.SQL.ledgerDeliveries,
            ["transaction_ids": transactionIDs, "product_id": product],
            relations: ["deliveries": relations.deliveries])[0]
        let matching: Int = try ledger["matching"]
        let any: Int = try ledger["any"]
        return LedgerFacts(
            buyer: account, consented: consented, productType: try family[0]["product_type"],
            deliveryStatus: matching > 0 ? .delivered : any > 0 ? .undeliveredWrongItem : .undeliveredOther,
            consumedMilli: matching > 0 ? try ledger["consumed"] : 0)
    }

    /// Whether the nightly rules, judging the family now over exactly its transactions (into the
    /// diff's work tables of the caller's transaction, emptied at its commit), find who holds it
    /// disputed between accounts (`wrong_account`, `shared_receipt`), the item not settled by a
    /// person. The grace period is not waited for: a delivery to another account disputes the
    /// holder's consent at once. Without `RECONCILE_BUNDLE_IDS` the rules judge nothing (every
    /// transaction is foreign): the open items and the ledger's bindings decide alone.
    static func disputedByTheRules(
        _ transactionIDs: [String], relations: Differ.Relations, settings: Settings, on connection: Connection
    ) throws -> Bool {
        guard !settings.bundleIDs.isEmpty else { return false }
        let parameters = Differ.Parameters(
            settings: settings, runID: 0, judgeBefore: Date(), scope: .transactions(transactionIDs), resumesAfter: 0)
        try Differ(relations: relations).computeFindings(parameters, evidence: false, on: connection)
        return try connection.query(
            ConsumptionAnswerer.SQL.disputedFindings,
            ["transaction_ids": transactionIDs, "disputed_kinds": FindingKind.disputedKinds])[0].decode(Bool.self, at: 0)
    }

    /// Whether a relation has a column, read from the catalogue (the relation may be a view).
    static func hasColumn(_ column: String, in relation: QualifiedRelation, on connection: Connection) throws -> Bool {
        try connection.queryFirst(ConsumptionAnswerer.SQL.hasColumn, ["relation": relation.sql, "column": column]) != nil
    }

    /// The body Apple gets.
    func consumptionRequest(_ policy: Settings.ConsumptionAnswers) -> ConsumptionRequest {
        let subscription = productType == "auto_renewable"
        let percentage = subscription ? nil : consumedMilli
        var preference: ConsumptionRequest.RefundPreference?
        if policy.refundPreference == .ledger {
            if deliveryStatus != .delivered {
                preference = .grantFull
            } else if let percentage {
                preference = percentage >= 100_000 ? .decline : percentage == 0 ? .grantFull : .grantProrated
            }
        }
        return ConsumptionRequest(
            customerConsented: consented, deliveryStatus: deliveryStatus,
            sampleContentProvided: policy.sampleContentProvided, consumptionPercentage: percentage,
            refundPreference: preference)
    }
}

/// One row of `reconcile.consumption_answers`: what the job answered Apple about a refund request
/// and what Apple decided, for the review pages and the support desk.
public struct ConsumptionAnswerRecord: Sendable, Equatable {
    /// What became of a request (`status`): a row holds one of these, and a row holding another
    /// text fails to decode.
    public enum Status: String, Sendable, CaseIterable, Codable, PostgresEncodable, PostgresNonNullDecodable {
        /// Apple accepted the answer.
        case answered
        /// Past Apple's 12 hours, or Apple decided first: recorded, never sent.
        case expired
        /// Apple refused the answer for good.
        case failed
    }

    /// What Apple decided about the refund (`outcome`).
    public enum Outcome: String, Sendable, CaseIterable, Codable, PostgresEncodable, PostgresNonNullDecodable {
        /// `REFUND`.
        case refunded
        /// `REFUND_DECLINED`.
        case declined

        /// The outcome a notification of this type decides, nil for a type that decides none.
        public init?(decision type: NotificationType) {
            switch type {
            case .refund: self = .refunded
            case .refundDeclined: self = .declined
            default: return nil
            }
        }
    }

    public var id: Int64
    public var transactionID: String
    public var userID: String?
    /// When Apple asked (the first request's `signedDate`).
    public var requestedAt: Date
    /// When the job answered (or recorded the request expired, or Apple refused the answer).
    public var answeredAt: Date
    public var status: Status
    /// The ConsumptionRequest JSON sent, nil when nothing was sent.
    public var body: String?
    /// Why Apple refused the answer (`failed`), in Apple's or the client's words.
    public var appleError: String?
    /// Set once Apple decided.
    public var outcome: Outcome?
    public var decidedAt: Date?

    /// What the body told Apple: `deliveryStatus`, `consumptionPercentage` (milliunits, 100000 =
    /// all used) and `refundPreference`, nil when absent or nothing was sent.
    public var sent: (deliveryStatus: String?, consumptionPercentage: Int?, refundPreference: String?) {
        guard let body, let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        else { return (nil, nil, nil) }
        return (
            object["deliveryStatus"] as? String, (object["consumptionPercentage"] as? NSNumber)?.intValue,
            object["refundPreference"] as? String
        )
    }

    /// Every answer about these transactions, or to requests about this account's purchases,
    /// newest first.
    public static func find(transactionIDs: [String], userID: String? = nil, on connection: Connection) throws
        -> [ConsumptionAnswerRecord]
    {
        try connection.query(ConsumptionAnswerer.SQL.answersFor, ["transaction_ids": transactionIDs, "user_id": userID]).map { row in
            ConsumptionAnswerRecord(
                id: try row.decode(Int64.self, at: 0), transactionID: try row.decode(String.self, at: 1),
                userID: try row.decode(String?.self, at: 2), requestedAt: try row.decode(Date.self, at: 3),
                answeredAt: try row.decode(Date.self, at: 4), status: try row.decode(Status.self, at: 5),
                body: try row.decode(String?.self, at: 6), appleError: try row.decode(String?.self, at: 7),
                outcome: try row.decode(Outcome?.self, at: 8), decidedAt: try row.decode(Date?.self, at: 9))
        }
    }
}

extension ConsumptionAnswerer {
    /// The statements, in `sql/consumption/`.
    enum SQL {
        static let pendingRequests: SQLFile = "consumption/pending_requests.sql"
        static let claimLease: SQLFile = "consumption/claim_lease.sql"
        static let releaseLease: SQLFile = "consumption/release_lease.sql"
        static let disputedFindings: SQLFile = "consumption/disputed_findings.sql"
        static let requestTaken: SQLFile = "consumption/request_taken.sql"
        static let decisions: SQLFile = "consumption/decisions.sql"
        static let joinOpenAnswer: SQLFile = "consumption/join_open_answer.sql"
        static let recordAnswer: SQLFile = "consumption/record_answer.sql"
        static let family: SQLFile = "consumption/family.sql"
        static let ledgerFacts: SQLFile = "consumption/ledger_facts.sql"
        static let consented: SQLFile = "consumption/consented.sql"
        static let ledgerDeliveries: SQLFile = "consumption/ledger_deliveries.sql"
        static let ledgerConsumed: SQLFile = "consumption/ledger_consumed.sql"
        static let hasColumn: SQLFile = "consumption/has_column.sql"
        static let answersFor: SQLFile = "consumption/answers_for.sql"
    }
}
