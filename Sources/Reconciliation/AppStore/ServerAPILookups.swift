import AppStore
import Foundation
import Logging
import Postgres

/// The App Store Server API half of a run (SPEC section 3), when credentials are configured:
/// the full transaction history of every customer seen in the window (so purchases never
/// uploaded, finished consumables and refunds are found), and Get Transaction Info for ledger
/// transactions no source contains, so that "Apple does not know it" is Apple's answer.
public struct ServerAPILookups: Sendable {
    let client: AppStoreServerAPIClient
    let settings: Settings
    let logger: Logger

    /// Creates the lookups over a client.
    public init(client: AppStoreServerAPIClient, settings: Settings, logger: Logger) {
        self.client = client
        self.settings = settings
        self.logger = logger
    }

    /// What the lookups did.
    public struct Summary: Sendable, Equatable {
        /// Customers whose history was read.
        public var histories = 0
        /// Transactions Apple returned.
        public var transactions = 0
        /// Ledger transactions looked up one by one.
        public var lookups = 0
        /// Calls Apple could not answer now (tried again next run).
        public var unanswered = 0
    }

    /// Runs both lookups for the run. Throws ``ServerAPIUnreachableError`` once Apple answered none
    /// of ``ServerAPIOutage/threshold`` calls in a row: what was asked is kept, the rest waits.
    public func run(_ run: RunContext) async throws -> Summary {
        var summary = Summary()
        var outage = ServerAPIOutage()
        try await histories(
            runID: run.id, resumesAfter: run.resumesAfter, on: run.connection, into: &summary, outage: &outage)
        try await transactionInfo(
            runID: run.id, since: run.since, ledgerChangesAfter: try RunLedger.ledgerChangesAfter(run),
            judgeBefore: run.judgeBefore, on: run.connection, into: &summary, outage: &outage)
        try await unclaimedHistories(runID: run.id, resumesAfter: run.resumesAfter, on: run.connection,
                                     into: &summary, outage: &outage)
        return summary
    }

    /// Histories asked per run for transactions no upload carried.
    static let maxUnclaimedHistories = 1000

    /// SPEC section 5: a customer's history is fetched again whenever anything new names that
    /// customer. A transaction the job learnt of this run that no upload carried and no history
    /// listed (a notification's purchase or refund, Get Transaction Info's answer about a credit)
    /// names its Apple account: its history is fetched, seeded with it, and recorded as listed by
    /// every app account tied to that Apple account (`shareListing`), as the histories a run over
    /// the whole history fetches for those accounts would list it. With no account tied, nothing is
    /// recorded: nobody's uploads lead to that Apple account, in a chain of nights or in one run.
    func unclaimedHistories(
        runID: Int64, resumesAfter: Int64, on connection: Connection, into summary: inout Summary,
        outage: inout ServerAPIOutage
    ) async throws {
        var after = ""
        var covered: Set<String> = []
        var asked = 0
        while asked < Self.maxUnclaimedHistories, !outage.isOngoing {
            try Task.checkCancellation()
            let seeds = try connection.query(
                SQL.unclaimedSeeds, ["resumes_after": resumesAfter, "bundle_ids": settings.bundleIDs, "after": after]
            ).map { try $0.decode(String.self, at: 0) }
            guard let last = seeds.last else { return }
            after = last
            for seed in seeds where !covered.contains(seed) && asked < Self.maxUnclaimedHistories {
                try Task.checkCancellation()
                asked += 1
                let outcome = try await call({ try await client.transactionHistory(for: seed, logger: logger) })
                outage.observe(outcome)
                guard case .found(let history) = outcome else {
                    // Not answered now (Apple down, an answer that fails its checks): asked again by
                    // the next run. Not found or refused: nothing to list.
                    switch outcome {
                    case .retryLater, .unverifiable:
                        summary.unanswered += 1
                        try connection.execute(SQL.historyRetry, ["transaction_id": seed, "run_id": runID])
                    default:
                        try connection.execute(SQL.historyRetriesDone, ["transaction_ids": [seed]])
                    }
                    continue
                }
                summary.histories += 1
                let found = history.transactions.compactMap { AppleTransactionRecord($0, source: .serverAPI) }
                    .filter { $0.fieldHoldingNUL == nil }
                covered.formUnion(found.map(\.transactionID))
                covered.insert(seed)
                summary.transactions += found.count
                try connection.transaction {
                    try TransactionStore.upsert(found.map { ($0, nil) }, runID: runID, on: connection)
                    try Self.shareListing(found.map(\.transactionID), fetchedFor: nil, runID: runID, on: connection)
                    try connection.execute(
                        SQL.historyRetriesDone, ["transaction_ids": found.map(\.transactionID) + [seed]])
                }
            }
            try outage.stopIfOngoing()
        }
    }

    /// One history call per account whose uploads this run (or a run since `resumesAfter` that
    /// did not finish) verified, seeded with the newest transaction of this app it carried, and
    /// per account whose history an earlier run could not get (`reconcile.history_lookups`).
    func histories(
        runID: Int64, resumesAfter: Int64, on connection: Connection, into summary: inout Summary,
        outage: inout ServerAPIOutage
    ) async throws {
        var after = ""
        while true {
            try Task.checkCancellation()
            let seeds = try connection.query(
                SQL.historySeeds, ["resumes_after": resumesAfter, "bundle_ids": settings.bundleIDs, "after": after]
            ).map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1), try $0.decode(Int64.self, at: 2)) }
            guard let last = seeds.last else { return }
            after = last.0
            var records: [(AppleTransactionRecord, Carrier?)] = []
            var listed: [(user: String, transactions: [String])] = []
            var unanswered: [(user: String, transaction: String, upload: Int64, reason: String)] = []
            var asked: [String] = []
            for (user, transaction, upload) in seeds {
                // One app account may buy with several Apple IDs (family devices), and a history is
                // one Apple ID's: ask again, seeded with a transaction no history covered yet, until
                // every verified transaction the account carried is covered (SPEC section 14).
                // Apple is down: the seeds not asked stay as they are, for the next run.
                if outage.isOngoing { break }
                asked.append(user)
                var covered: Set<String> = []
                var seed: String? = transaction
                var histories = 0
                accounts: while let current = seed, histories < Self.maxHistoriesPerAccount, !outage.isOngoing {
                    histories += 1
                    covered.insert(current)
                    let outcome = try await call({ try await client.transactionHistory(for: current, logger: logger) })
                    outage.observe(outcome)
                    switch outcome {
                    case .found(let history):
                        summary.histories += 1
                        // PostgreSQL text cannot store NUL: such a transaction is left out, never stored cut.
                        let found = history.transactions.compactMap {
                            AppleTransactionRecord($0, source: .serverAPI)
                        }.filter { $0.fieldHoldingNUL == nil }
                        covered.formUnion(history.transactions.compactMap(\.transactionId))
                        summary.transactions += found.count
                        records += found.map { ($0, Carrier(uploadID: upload, userID: user)) }
                        listed.append((user, found.map(\.transactionID)))
                    case .retryLater(let reason, _, _):
                        summary.unanswered += 1
                        unanswered.append((user, current, upload, reason))
                        logger.notice("transaction history not available now", metadata: ["reason": "\(reason)"])
                        break accounts
                    case .unverifiable(let failure):
                        // An answer that fails Apple's signature checks is no answer: ask again.
                        summary.unanswered += 1
                        unanswered.append((user, current, upload, failure.description.escapingNUL))
                        logger.warning("transaction history failed verification", metadata: ["reason": "\(failure)"])
                        break accounts
                    case .notFound, .rejected:
                        logger.warning("transaction history refused", metadata: ["transaction.id": "\(current)"])
                    }
                    seed = try uncovered(user: user, covered: covered, on: connection)
                }
            }
            try connection.transaction {
                try TransactionStore.upsert(records, runID: runID, on: connection)
                for (user, transactions) in listed {
                    try Self.shareListing(transactions, fetchedFor: user, runID: runID, on: connection)
                }
                // What Apple answered (or refused for good) is settled; what it could not answer
                // now waits for the next run.
                try connection.execute(
                    SQL.historyLookupsAnswered,
                    ["user_ids": asked.filter { user in !unanswered.contains { $0.user == user } }, "run_id": runID])
                for pending in unanswered {
                    try connection.execute(
                        SQL.historyLookupRetry,
                        ["user_id": pending.user, "transaction_id": pending.transaction, "upload_id": pending.upload,
                         "last_error": pending.reason, "run_id": runID])
                }
            }
            try outage.stopIfOngoing()
        }
    }

    /// A history is one Apple account's, whichever app account it was fetched for. Every other app
    /// account tied to that Apple account (one of its uploads carried, or an earlier fetch of the
    /// same history listed, one of these transactions: a run over the whole history fetches its
    /// history too) is recorded as listing the new ones too, so that who an Apple
    /// account's purchases belong to does not depend on when each account's history was last
    /// fetched: with two app accounts on one Apple ID, a purchase no upload carried has an unknown
    /// buyer whether the chain of nights fetched both histories after it or only one (43_buyer.sql,
    /// SPEC section 5: a chain of nightly runs equals one run over the whole history).
    static func shareListing(_ transactions: [String], fetchedFor user: String?, runID: Int64, on connection: Connection)
        throws
    {
        guard !transactions.isEmpty else { return }
        try connection.execute(SQL.shareListing, ["transaction_ids": transactions, "user_id": user, "run_id": runID])
    }

    /// Histories asked at most per account and run: the pacer bounds the rate, this the total
    /// against a ledger that claims thousands of Apple IDs.
    static let maxHistoriesPerAccount = 100

    /// The newest verified transaction of this app the account's uploads carried that no history
    /// fetched for it covers.
    func uncovered(user: String, covered: Set<String>, on connection: Connection) throws -> String? {
        try connection.queryFirst(
            SQL.uncoveredSeed, ["user_id": user, "bundle_ids": settings.bundleIDs, "covered": Array(covered)]
        )?.decode(String.self, at: 0)
    }

    /// Get Transaction Info for every delivered transaction of the window, of the ledger's changes
    /// since the last finished run (whatever their `delivered_at`), or of an open
    /// unverified_delivery item, that no verified source contains and Apple has not yet answered.
    func transactionInfo(
        runID: Int64, since: Date?, ledgerChangesAfter: String, judgeBefore: Date, on connection: Connection,
        into summary: inout Summary, outage: inout ServerAPIOutage
    ) async throws {
        // Paged by transaction id, so memory stays flat.
        let deliveries = settings.relations.deliveries
        var after = ""
        while true {
            let candidates = try connection.query(
                SQL.transactionInfoCandidates,
                ["since": since ?? Date.distantPast, "bundle_ids": settings.bundleIDs, "after": after,
                 "ledger_changes_after": ledgerChangesAfter, "unconfirmed_kinds": FindingKind.unconfirmedKinds,
                 "store": Store.appStore.rawValue, "users_verified": false],
                relations: ["deliveries": deliveries, "uploads": settings.relations.uploads]
            ).map { (try $0.decode(String.self, at: 0), try $0.decode(Date.self, at: 1)) }
            guard let last = candidates.last else { return }
            after = last.0
            try await lookUp(
                candidates, runID: runID, judgeBefore: judgeBefore, database: .holding(connection), into: &summary,
                outage: &outage)
        }
    }

    /// Asks Get Transaction Info about each candidate and records the answer, each in a short
    /// step of its own: no connection is held while Apple is asked.
    func lookUp(
        _ candidates: [(String, Date)], runID: Int64, judgeBefore: Date, database: ConnectionLender,
        into summary: inout Summary, outage: inout ServerAPIOutage
    ) async throws {
        for (transaction, deliveredAt) in candidates {
            try Task.checkCancellation()
            try outage.stopIfOngoing()
            summary.lookups += 1
            let outcome = try await call({ try await client.transactionInfo(for: transaction, logger: logger) })
            outage.observe(outcome)
            var result = "retry"
            var error: String?
            var records: [(AppleTransactionRecord, Carrier?)] = []
            switch outcome {
            case .found(let info):
                result = "found"
                if let record = AppleTransactionRecord(info, source: .serverAPI), record.fieldHoldingNUL == nil {
                    records.append((record, nil))
                }
            case .notFound, .rejected:
                // A fresh purchase can 404 for a while: not judged until it is older than the grace.
                result = deliveredAt <= judgeBefore ? "not_found" : "retry"
            case .unverifiable(let failure):
                // Stays 'retry' and counts as unresolved: the run must not say it completed.
                summary.unanswered += 1
                error = failure.description.escapingNUL
            case .retryLater(let reason, _, _):
                summary.unanswered += 1
                error = reason.escapingNUL
            }
            try await database.run { [records, result, error] connection in
                try connection.transaction {
                    try TransactionStore.upsert(records, runID: runID, on: connection)
                    try connection.execute(
                        SQL.transactionInfoAnswer,
                        ["transaction_id": transaction, "result": result, "last_error": error, "run_id": runID])
                }
            }
        }
    }

    /// A 401 means the key is wrong for good: stop the run with a configuration error.
    private func call<T>(_ body: () async throws -> ServerAPIOutcome<T>) async throws -> ServerAPIOutcome<T> {
        do {
            return try await body()
        } catch let error as ServerAPIConfigurationError {
            throw RunConfigurationError("\(error)")
        }
    }

    /// The lookups' statements (`sql/serverapi/`).
    enum SQL {
        static let unclaimedSeeds: SQLFile = "serverapi/unclaimed_seeds.sql"
        static let historyRetry: SQLFile = "serverapi/history_retry.sql"
        static let historyRetriesDone: SQLFile = "serverapi/history_retries_done.sql"
        static let historySeeds: SQLFile = "serverapi/history_seeds.sql"
        static let historyLookupsAnswered: SQLFile = "serverapi/history_lookups_answered.sql"
        static let historyLookupRetry: SQLFile = "serverapi/history_lookup_retry.sql"
        static let shareListing: SQLFile = "serverapi/share_listing.sql"
        static let uncoveredSeed: SQLFile = "serverapi/uncovered_seed.sql"
        static let transactionInfoCandidates: SQLFile = "serverapi/transaction_info_candidates.sql"
        static let transactionInfoAnswer: SQLFile = "serverapi/transaction_info_answer.sql"
    }
}

/// Tells a Server API that is down from calls that fail one by one: calls Apple did not answer
/// (`retryLater`: timeouts, connection errors, HTTP 5xx and 429) in a row. Past the threshold the
/// run stops asking, keeps what was answered and leaves the rest for the next run, as the
/// verifyReceipt phase does (`AppleOutage`).
struct ServerAPIOutage {
    static let threshold = 20
    private(set) var unanswered = 0
    private(set) var lastReason = ""

    var isOngoing: Bool { unanswered >= Self.threshold }

    mutating func observe<T>(_ outcome: ServerAPIOutcome<T>) {
        if case .retryLater(let reason, _, _) = outcome {
            unanswered += 1
            lastReason = reason
        } else {
            unanswered = 0
        }
    }

    func stopIfOngoing() throws {
        if isOngoing { throw ServerAPIUnreachableError(unanswered: unanswered, lastReason: lastReason) }
    }
}

/// The App Store Server API answered none of many calls in a row: the run stops and fails
/// (exit 1); what it did not ask waits for the next run.
public struct ServerAPIUnreachableError: Error, CustomStringConvertible {
    /// Calls in a row Apple did not answer.
    public let unanswered: Int
    /// The last failure, as the client saw it.
    public let lastReason: String

    public var description: String {
        "Apple's App Store Server API did not answer \(unanswered) calls in a row (last: \(lastReason)); "
            + "the run stopped asking and left the rest for the next run"
    }
}
