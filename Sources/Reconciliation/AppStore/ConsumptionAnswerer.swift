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
/// a run) take turns per transaction: one sends, the others leave the request.
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
        var environment: String
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
                environment: try $0.decode(String.self, at: 2), signedDate: try $0.decode(Date.self, at: 3),
                appAccountToken: try $0.decode(UUID?.self, at: 4), productID: try $0.decode(String?.self, at: 5),
                productType: try $0.decode(String?.self, at: 6))
        }
        for request in requests {
            try Task.checkCancellation()
            try await answer(request, now: now, on: connection, into: &summary)
        }
        return summary
    }

    private func answer(_ request: Request, now: Date, on connection: Connection, into summary: inout Summary)
        async throws
    {
        // The receiver's worker, `notifications sync` and a run's sync stage all answer: one at a
        // time per transaction, the lock held across Apple's call until the answer is recorded.
        // Another process holding it has the request in hand; it is left for a later pass.
        try await connection.transaction {
            guard
                try connection.query(
                    SQL.lockTransaction,
                    ["lock_class": Schema.LockKey.consumptionClass, "transaction_id": request.transactionID]
                )[0].decode(Bool.self, at: 0)
            else {
                summary.waiting += 1
                return
            }
            // Read pending before the lock: another process may have answered it since.
            guard try connection.queryFirst(SQL.requestTaken, ["uuid": request.uuid]) == nil else { return }
            try await answerLocked(request, now: now, on: connection, into: &summary)
        }
    }

    private func answerLocked(_ request: Request, now: Date, on connection: Connection, into summary: inout Summary)
        async throws
    {
        // Apple's decisions close the answers requested before them, one recorded after its
        // decision arrived included (answered late, or while the decision was being stored): a
        // request after a decision is a new one, never joined to an answer Apple already decided.
        let decisions = try connection.query(SQL.decisions, ["transaction_id": request.transactionID]).map {
            (type: try $0.decode(String.self, at: 0), signedDate: try $0.decode(Date.self, at: 1))
        }
        for decision in decisions {
            try NotificationLedger.closeAnswers(
                transactionID: request.transactionID, decision: decision.type, signedDate: decision.signedDate,
                on: connection)
        }
        // Apple re-sends a request it is still waiting on with a new UUID: it joins the open answer.
        let joined = try connection.execute(
            SQL.joinOpenAnswer, ["transaction_id": request.transactionID, "uuid": request.uuid])
        guard joined == 0 else { return }
        // Apple decided before the request was answered (no consent then, or Apple unreachable):
        // nothing is sent, and the request is recorded expired with Apple's outcome.
        if let decision = decisions.first(where: { $0.signedDate >= request.signedDate }) {
            summary.expired += 1
            try record(request, user: nil, status: "expired", body: nil, http: nil, error: nil, on: connection)
            try NotificationLedger.closeAnswers(
                transactionID: request.transactionID, decision: decision.type, signedDate: decision.signedDate,
                on: connection)
            return
        }
        if request.signedDate < now.addingTimeInterval(-Self.deadline) {
            summary.expired += 1
            try record(request, user: nil, status: "expired", body: nil, http: nil, error: nil, on: connection)
            return
        }
        guard let facts = try LedgerFacts.read(request, settings: settings, on: connection), facts.consented else {
            summary.waiting += 1
            return
        }
        let body = facts.consumptionRequest(settings.consumption)
        let environment: AppStoreEnvironment = request.environment == "Sandbox" ? .sandbox : .production
        let outcome = try await client.sendConsumptionInformation(
            transactionId: request.transactionID, body, environment: environment, logger: logger)
        let sent = String(decoding: try AppStoreJSON.encoder().encode(body), as: UTF8.self)
        switch outcome {
        case .found(let status):
            summary.answered += 1
            try record(request, user: facts.buyer, status: "answered", body: sent, http: status, error: nil, on: connection)
        case .notFound:
            summary.failed += 1
            try record(
                request, user: facts.buyer, status: "failed", body: sent, http: 404,
                error: "4040010 transaction id not found", on: connection)
        case .rejected(let code, let reason):
            summary.failed += 1
            try record(
                request, user: facts.buyer, status: "failed", body: sent, http: code.map { $0 / 10_000 },
                error: reason.escapingNUL, on: connection)
        case .retryLater(let reason, _, _):
            // Tried again by the next sync, while the 12 hours last.
            summary.waiting += 1
            logger.notice("consumption answer not accepted now", metadata: ["reason": "\(reason)"])
        case .unverifiable:
            summary.waiting += 1
        }
    }

    private func record(
        _ request: Request, user: String?, status: String, body: String?, http: Int?, error: String?,
        on connection: Connection
    ) throws {
        try connection.execute(SQL.recordAnswer, [
            "transaction_id": request.transactionID, "environment": request.environment, "user_id": user,
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
    var deliveryStatus: String
    /// Milliunits of the delivered quantity used, when the ledger says.
    var consumedMilli: Int?

    /// The facts, or nil when no account's consent can count: the purchase is delivered to more
    /// than one account, or undelivered and bound to no account (an uploader alone is no proof
    /// of who paid), or an open `wrong_account` or `shared_receipt` item disputes who holds it.
    /// The delivery status and the consumption are the transaction's, whichever account holds
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
        let account: String? = delivered ? try row["holder"] : try row["bound_buyer"]
        guard let account, !disputed else { return nil }
        let consent = settings.consumption.consentRelation
        let consented = try connection.queryFirst(
            ConsumptionAnswerer.SQL.consented, ["user_id": account], relations: ["consent": consent]) != nil
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
            deliveryStatus: matching > 0 ? "DELIVERED" : any > 0 ? "UNDELIVERED_WRONG_ITEM" : "UNDELIVERED_OTHER",
            consumedMilli: matching > 0 ? try ledger["consumed"] : 0)
    }

    /// Whether a relation has a column, read from the catalogue (the relation may be a view).
    static func hasColumn(_ column: String, in relation: QualifiedRelation, on connection: Connection) throws -> Bool {
        try connection.queryFirst(ConsumptionAnswerer.SQL.hasColumn, ["relation": relation.sql, "column": column]) != nil
    }

    /// The body Apple gets.
    func consumptionRequest(_ policy: Settings.ConsumptionAnswers) -> ConsumptionRequest {
        let subscription = productType == "auto_renewable"
        let percentage = subscription ? nil : consumedMilli
        var preference: String?
        if policy.refundPreference == .ledger {
            if deliveryStatus != "DELIVERED" {
                preference = "GRANT_FULL"
            } else if let percentage {
                preference = percentage >= 100_000 ? "DECLINE" : percentage == 0 ? "GRANT_FULL" : "GRANT_PRORATED"
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
    public var id: Int64
    public var transactionID: String
    public var userID: String?
    /// When Apple asked (the first request's `signedDate`).
    public var requestedAt: Date
    /// When the job answered (or recorded the request expired, or Apple refused the answer).
    public var answeredAt: Date
    /// `answered`, `expired` or `failed`.
    public var status: String
    /// The ConsumptionRequest JSON sent, nil when nothing was sent.
    public var body: String?
    /// Why Apple refused the answer (`failed`), in Apple's or the client's words.
    public var appleError: String?
    /// `refunded` or `declined`, once Apple decided.
    public var outcome: String?
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
                answeredAt: try row.decode(Date.self, at: 4), status: try row.decode(String.self, at: 5),
                body: try row.decode(String?.self, at: 6), appleError: try row.decode(String?.self, at: 7),
                outcome: try row.decode(String?.self, at: 8), decidedAt: try row.decode(Date?.self, at: 9))
        }
    }
}

extension ConsumptionAnswerer {
    /// The statements, in `sql/consumption/`.
    enum SQL {
        static let pendingRequests: SQLFile = "consumption/pending_requests.sql"
        static let lockTransaction: SQLFile = "consumption/lock_transaction.sql"
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
