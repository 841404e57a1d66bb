import AppStore
import Foundation
import Postgres

/// What verifying one stored App Store Server Notification established.
public enum NotificationVerdict: Sendable, Equatable {
    /// Signed by Apple and for this app: its UUID, type, and the transaction it carries (if any).
    case verified(uuid: UUID, type: NotificationType, subtype: String?, signedDate: Date?, transaction: AppleTransactionRecord?)
    /// Not acceptable, for good.
    case invalid(reason: String)
}

extension AppleUploadVerifier {
    /// Verifies a stored `{"signedPayload": …}` body (or a bare signed payload) with its nested
    /// signed transaction.
    public func verifyNotification(_ body: String) async -> NotificationVerdict {
        switch await jwsVerifier.verifyNotificationBody(body) {
        case .invalid(let failure):
            return .invalid(reason: failure.description)
        case .valid(let notification):
            guard let text = notification.notificationUUID, let uuid = UUID(uuidString: text) else {
                return .invalid(reason: "the notification has no notificationUUID")
            }
            let transaction = notification.transaction.flatMap { AppleTransactionRecord($0, source: .notification) }
            if let field = transaction?.fieldHoldingNUL {
                return .invalid(
                    reason: "Apple's data holds a NUL character in \(field); PostgreSQL text cannot store it")
            }
            return .verified(
                uuid: uuid, type: notification.payload.notificationType ?? .unknown,
                subtype: notification.payload.subtype?.rawValue, signedDate: notification.payload.signedDate,
                transaction: transaction)
        }
    }
}

/// Applies `reconcile.notifications` (SPEC section 3): each stored body is verified once;
/// `REFUND`/`REVOKE` carry a revoked transaction, `REFUND_REVERSED` one whose revocation is gone,
/// `ONE_TIME_CHARGE` and the subscription types new transactions. Apple resends a notification
/// with the same `notificationUUID`: only the first is applied.
public struct NotificationApplier: Sendable {
    /// Verifies a body.
    public let verify: @Sendable (String) async -> NotificationVerdict
    /// What the receiver's listener in this process verified before storing it, reused for exactly
    /// those rows; every other row is verified with `verify`.
    let known: ListenerVerdicts?

    /// Creates an applier around a verification function; `known`: the verdicts of the listener
    /// of the same process (`reconcile notifications receive`).
    public init(verify: @escaping @Sendable (String) async -> NotificationVerdict, known: ListenerVerdicts? = nil) {
        self.verify = verify
        self.known = known
    }

    /// Applies every stored notification not yet seen, then those Get Notification History brought
    /// (`reconcile notifications sync`); returns how many were applied.
    @discardableResult
    public func applyPending(runID: Int64, on connection: Connection, batchSize: Int = 100) async throws -> Int {
        try await applyEndpoint(runID: runID, on: connection, batchSize: batchSize)
            + applyHistory(runID: runID, on: connection, batchSize: batchSize)
    }

    /// The largest stored notification body read: Apple's are a few tens of KB (a signed payload
    /// with its nested signed transaction and their certificate chains); SPEC section 16's
    /// receiver refuses bodies over 256 KB. The app's endpoint stores bodies unverified, so anyone
    /// can fill the table: larger ones are made `invalid` (`payload_too_large`) from their size
    /// alone, in SQL, and never fetched.
    public static let maximumBodyBytes = 256 << 10
    /// The most body bytes one batch fetches (at least one body): memory stays flat whatever the
    /// table holds.
    public static let maximumBatchBytes = 8 << 20

    /// Notifications the app's endpoint stored in `reconcile.notifications`. `untilShortBatch`: stop
    /// after a batch that drained the table, one cut short by neither `batchSize` nor
    /// ``maximumBatchBytes`` (the receiver's worker, which comes back within its
    /// gathering time: while notifications keep arriving, chasing them one small batch after
    /// another paid each batch's statements for a handful of rows); otherwise until none is left.
    /// `withEachBatch` runs in each batch's transaction, after it was recorded, with the ids of the
    /// stored notifications it read: what it writes commits with the batch or not at all (the
    /// receiver notes the transactions they brought for judgement).
    func applyEndpoint(
        runID: Int64, on connection: Connection, batchSize: Int, untilShortBatch: Bool = false,
        withEachBatch: (_ notificationIDs: [Int64]) throws -> Void = { _ in }
    ) async throws -> Int {
        try connection.execute(SQL.rejectOversized, ["run_id": runID, "maximum_body_bytes": Self.maximumBodyBytes])
        var applied = 0
        var after: Int64 = 0
        while true {
            try Task.checkCancellation()
            // Up to `batchSize` bodies and `maximumBatchBytes` of them; sizes are read before any
            // body is, and a body too large that arrived meanwhile waits for the next run.
            let batch = try connection.query(SQL.endpointBatch, [
                "after": after, "batch_size": batchSize, "maximum_batch_bytes": Self.maximumBatchBytes,
                "maximum_body_bytes": Self.maximumBodyBytes,
            ]).map { (try $0.decode(Int64.self, at: 0), try $0.decode(String.self, at: 1)) }
            guard let last = batch.last else { return applied }
            after = last.0
            var verdicts: [(Int64, NotificationVerdict)] = []
            for (id, body) in batch {
                if let verdict = known?.take(id: id, body: body) {
                    verdicts.append((id, verdict))
                } else {
                    verdicts.append((id, await verify(body)))
                }
            }
            applied += try connection.transaction {
                let applied = try record(verdicts, runID: runID, on: connection)
                try withEachBatch(verdicts.map(\.0))
                return applied
            }
            // Cut short by neither limit: the table was drained when the batch was read.
            if untilShortBatch, batch.count < batchSize,
                batch.reduce(0, { $0 + $1.1.utf8.count }) <= Self.maximumBatchBytes - Self.maximumBodyBytes
            {
                return applied
            }
        }
    }

    private func record(_ verdicts: [(Int64, NotificationVerdict)], runID: Int64, on connection: Connection) throws -> Int {
        var claimed: [NotificationLedger.Entry] = []
        for (id, verdict) in verdicts {
            switch verdict {
            case .invalid(let reason):
                try connection.execute(SQL.endpointInvalid, ["id": id, "error": reason.escapingNUL, "run_id": runID])
            case .verified(let uuid, let type, let subtype, let signedDate, let transaction):
                claimed.append(.init(
                    sourceID: id, uuid: uuid, type: type, subtype: subtype, signedDate: signedDate,
                    transaction: transaction))
            }
        }
        guard !claimed.isEmpty else { return 0 }
        // One notificationUUID is applied once, whichever source brought it first.
        let first = try NotificationLedger.claim(claimed, source: "endpoint", on: connection)
        try connection.queryPrepared(SQL.endpointVerified, [
            "ids": claimed.map(\.sourceID), "states": first.map { $0 ? "applied" : "duplicate" },
            "uuids": claimed.map(\.uuid), "types": claimed.map(\.type.rawValue), "subtypes": claimed.map(\.subtype),
            "transaction_ids": claimed.map(\.transaction?.transactionID), "signed_dates": claimed.map(\.signedDate),
            "run_id": runID,
        ])
        let applied = zip(claimed, first).filter(\.1).map(\.0)
        try TransactionStore.upsert(applied.compactMap { $0.transaction.map { ($0, nil) } }, runID: runID, on: connection)
        return applied.count
    }

    /// Notifications `reconcile notifications sync` accepted from Get Notification History: their
    /// transactions enter the white table in a run (or a receiver pass), so that the diff sees what
    /// changed. `withEachBatch` runs in each batch's transaction with the ids of the transactions
    /// it applied (the receiver notes them for judgement).
    func applyHistory(
        runID: Int64, on connection: Connection, batchSize: Int,
        withEachBatch: (_ transactionIDs: [String]) throws -> Void = { _ in }
    ) async throws -> Int {
        var applied = 0
        while true {
            try Task.checkCancellation()
            let batch = try connection.query(SQL.historyBatch, ["batch_size": batchSize]).map { (try $0.decode(Int64.self, at: 0), try $0.decode(String.self, at: 1)) }
            guard !batch.isEmpty else { return applied }
            var records: [(AppleTransactionRecord, Carrier?)] = []
            for (_, payload) in batch {
                if case .verified(_, _, _, _, let transaction?) = await verify(payload) {
                    records.append((transaction, nil))
                }
            }
            try connection.transaction {
                try TransactionStore.upsert(records, runID: runID, on: connection)
                try connection.execute(SQL.historyApplied, ["ids": batch.map(\.0), "run_id": runID])
                try withEachBatch(records.map(\.0.transactionID))
            }
            applied += batch.count
        }
    }
}

/// `reconcile.notifications_seen`: every notificationUUID once, whatever brought it (SPEC section
/// 14), and what a first-seen refund decision means for an answer to a refund request.
enum NotificationLedger {
    /// A verified notification of one source, as the ledger records it.
    struct Entry {
        /// The row that brought it: the stored notification's id, or the Notification History row's.
        var sourceID: Int64
        var uuid: UUID
        var type: NotificationType
        var subtype: String?
        var signedDate: Date?
        var transaction: AppleTransactionRecord?
    }

    /// Records verified notifications of one source in one statement; for each, in order, true when
    /// this copy is the first of its UUID (or is the copy recorded before), false for a duplicate.
    static func claim(_ entries: [Entry], source: String, on connection: Connection) throws -> [Bool] {
        guard !entries.isEmpty else { return [] }
        let rows = try connection.queryPrepared(NotificationApplier.SQL.claimSeen, [
            "source": source, "source_ids": entries.map(\.sourceID), "uuids": entries.map(\.uuid),
            "types": entries.map(\.type.rawValue), "subtypes": entries.map(\.subtype),
            "transaction_ids": entries.map(\.transaction?.transactionID),
            "environments": entries.map(\.transaction?.environment.rawValue),
            "app_account_tokens": entries.map(\.transaction?.appAccountToken),
            "signed_dates": entries.map(\.signedDate), "product_ids": entries.map(\.transaction?.productID),
            "product_types": entries.map(\.transaction?.productType),
        ])
        let first = try rows.map { try $0.decode(Bool.self, at: 1) }
        guard first.count == entries.count else {
            preconditionFailure("claim_seen.sql returned \(first.count) rows for \(entries.count) notifications")
        }
        // Apple's decision on a refund request closes the answer given to it (a later request is a
        // new one), in the order the decisions came.
        for (entry, isFirst) in zip(entries, first) where isFirst {
            guard let transaction = entry.transaction,
                let outcome = ConsumptionAnswerRecord.Outcome(decision: entry.type)
            else { continue }
            try closeAnswers(
                transactionID: transaction.transactionID, outcome: outcome, signedDate: entry.signedDate,
                on: connection)
        }
        return first
    }

    /// Closes the answers about a transaction requested before Apple's decision (REFUND or
    /// REFUND_DECLINED, signed at `signedDate`) with its outcome.
    static func closeAnswers(
        transactionID: String, outcome: ConsumptionAnswerRecord.Outcome, signedDate: Date?, on connection: Connection
    ) throws {
        try connection.execute(
            NotificationApplier.SQL.decisionClosesAnswer,
            ["transaction_id": transactionID, "outcome": outcome, "signed_date": signedDate])
    }
}

extension NotificationApplier {
    /// The statements, in `sql/notifications/`.
    enum SQL {
        static let rejectOversized: SQLFile = "notifications/reject_oversized.sql"
        static let endpointBatch: SQLFile = "notifications/endpoint_batch.sql"
        static let endpointInvalid: SQLFile = "notifications/endpoint_invalid.sql"
        static let endpointVerified: SQLFile = "notifications/endpoint_verified.sql"
        static let historyBatch: SQLFile = "notifications/history_batch.sql"
        static let historyApplied: SQLFile = "notifications/history_applied.sql"
        static let claimSeen: SQLFile = "notifications/claim_seen.sql"
        static let decisionClosesAnswer: SQLFile = "notifications/decision_closes_answer.sql"
    }
}
