import AppStore
import Foundation
import Logging
import Postgres
import Synchronization

/// The support desk (SPEC section 13): from what a customer says to that customer's picture,
/// for `reconcile lookup` and the web's search box alike.
///
/// What Apple answers (Look Up Order ID, Get Transaction History, Get Transaction Info) is
/// verified like any Server API answer and stored in the white table, so the next nightly run
/// knows it. The verdicts are the nightly run's: ``Differ`` computes the findings over the
/// customer's transactions only (``DiffScope/transactions(_:)``), and `enqueue`
/// upserts them into the queue with the same fingerprints, touching nothing else.
public struct DeskService: Sendable {
    /// Look Up Order ID is paced to this many requests per second (whatever `APPSTORE_API_RATE`).
    public static let orderLookupRate = 10.0
    /// The most transactions one picture holds.
    public static let maximumTransactions = 10_000
    /// The most Get Transaction History calls one lookup makes (one per Apple account).
    public static let maximumHistories = 20

    let settings: Settings
    let serverAPI: ServerAPILookups?
    /// Google Play's services while Play is on; their Developer API (a service account) answers
    /// the desk's `GPA.` order ids (`orders.get`, then the purchase token's state).
    let play: PlayServices?
    let logger: Logger

    /// A desk over the settings; `serverAPI` nil without credentials (no order lookups then),
    /// `play` nil while Google Play is off.
    public init(settings: Settings, serverAPI: ServerAPILookups?, play: PlayServices? = nil, logger: Logger) {
        self.settings = settings
        self.serverAPI = serverAPI
        self.play = play
        self.logger = logger
    }

    /// The Orders API lookups, with a service account.
    var playOrders: PlayOrderLookups? {
        guard let play, let api = play.api else { return nil }
        return PlayOrderLookups(api: api, services: play, relations: settings.relations)
    }

    /// The customer's picture. `enqueue` puts its findings in the review queue as a run would.
    public func lookup(
        _ query: DeskQuery, enqueue: Bool = false, actor: ReviewActor = .job, on connection: Connection
    ) async throws -> CustomerPicture {
        try await lookup(query, enqueue: enqueue, actor: actor, database: .holding(connection))
    }

    /// The customer's picture, each database step on a connection `database` lends for that step
    /// alone: none is held while Apple is asked. `appleTimeLimit` bounds all of Apple's answers
    /// together: past it an order lookup fails (`appleUnanswered`), and a lookup by another kind
    /// goes on with what is stored. The review events of items `enqueue` opens name `actor`.
    /// `details` picks, from the judged transactions in order, those whose ledger rows, uploads and
    /// review items are read (a page of them); nil reads every transaction's.
    public func lookup(
        _ query: DeskQuery, enqueue: Bool = false, actor: ReviewActor = .job, database: ConnectionLender,
        appleTimeLimit: Duration? = nil, details: (@Sendable ([CustomerPicture.Transaction]) -> [String])? = nil
    ) async throws -> CustomerPicture {
        let now = Date()
        let judgeBefore = now.addingTimeInterval(-settings.grace)
        let run = LookupRun()
        run.asked(.stored)
        var order: CustomerPicture.Order?
        // Nil until read: without the Server API nothing is asked between reading the customer's
        // transactions and judging them, so both happen in one step on one connection.
        var ids: [String]?
        if query.store == .googlePlay {
            // A Google Play order id: what the job holds, else Google's Orders API (SPEC section 18).
            let answer: (order: CustomerPicture.Order, transactions: [String])
            do {
                answer = try await Self.bounded(appleTimeLimit) {
                    try await lookUpPlayOrder(query.value, judgeBefore: judgeBefore, run: run, database: database)
                }
            } catch let limit as AppleTimeLimitReached {
                throw DeskError.googleUnanswered("\(limit)")
            }
            if query.kind == .order { order = answer.order }
            ids = answer.transactions
        } else if query.kind == .order {
            guard let serverAPI else { throw DeskError.orderNeedsServerAPI }
            let answer: (order: CustomerPicture.Order, transactions: [String])
            do {
                answer = try await Self.bounded(appleTimeLimit) {
                    try await lookUpOrder(query.value, api: serverAPI, run: run, database: database)
                }
            } catch let limit as AppleTimeLimitReached {
                throw DeskError.appleUnanswered("\(limit)")
            }
            order = answer.order
            ids = answer.transactions
        } else if let serverAPI {
            let known = try await database.run { try self.transactions(of: query, on: $0) }
            do {
                try await Self.bounded(appleTimeLimit) {
                    try await askApple(about: query, ids: known, api: serverAPI, judgeBefore: judgeBefore, run: run,
                                       database: database)
                }
            } catch let limit as AppleTimeLimitReached {
                logger.notice("the desk stopped waiting for Apple", metadata: ["reason": "\(limit)"])
            }
            ids = try await database.run { try self.transactions(of: query, on: $0) }
        }
        if query.store == .appStore, query.kind != .order, let lookups = playOrders {
            // The customer's Play ledger order ids nobody holds: orders.get, as the nightly run asks.
            let known: [String]
            if let ids {
                known = ids
            } else {
                known = try await database.run { try self.transactions(of: query, on: $0) }
            }
            do {
                if try await Self.bounded(appleTimeLimit, {
                    try await askGoogle(about: known, lookups: lookups, judgeBefore: judgeBefore, run: run,
                                        database: database)
                }) {
                    ids = try await database.run { try self.transactions(of: query, on: $0) }
                }
            } catch let limit as AppleTimeLimitReached {
                logger.notice("the desk stopped waiting for Google", metadata: ["reason": "\(limit)"])
            }
        }
        // Google Play keeps no purchase history by account: the desk says it could not ask one.
        let unavailable: [CustomerPicture.UnavailableSource] =
            (query.kind == .user || query.kind == .token) && play != nil ? [.playHistory] : []
        if let ids, ids.isEmpty {
            return CustomerPicture(
                query: query, order: order, transactions: [], asked: run.askedSources, unavailable: unavailable)
        }

        let differ = Differ(relations: settings.relations)
        let settings = self.settings
        let logger = self.logger
        let transactions = try await database.run { [ids] connection -> [CustomerPicture.Transaction] in
            let ids = try ids ?? self.transactions(of: query, on: connection)
            guard !ids.isEmpty else { return [] }
            // The findings enqueued belong to the lookup's run; a lookup that writes nothing makes none.
            let runID = try enqueue ? run.id(environment: settings.environment, on: connection) : (run.existingID ?? 0)
            let parameters = Differ.Parameters(
                settings: settings, runID: runID, judgeBefore: judgeBefore, scope: .transactions(ids), resumesAfter: 0)
            return try connection.transaction {
                // Nothing a plain lookup writes needs the WAL flushed before it answers (the file says why).
                if !enqueue { try connection.query(SQL.asynchronousCommit) }
                try queueUnseenUploads(of: query, ids: ids, on: connection)
                try differ.computeFindings(parameters, evidence: enqueue, on: connection)
                if enqueue {
                    let changes = try differ.upsertQueue(
                        runID: parameters.runID, resolving: .nothing, actor: actor, on: connection)
                    logger.info("lookup enqueued its findings", metadata: [
                        "run.id": "\(parameters.runID)", "items.created": "\(changes.created)",
                        "items.refreshed": "\(changes.refreshed)",
                    ])
                }
                return try differ.picture(parameters, details: details, on: connection)
            }
        }
        return CustomerPicture(
            query: query, order: order, transactions: transactions, asked: run.askedSources, unavailable: unavailable)
    }

    /// A Google Play order id (SPEC section 18: `orders.get`, then its purchase token's state).
    /// With a service account Google is asked whether or not the job holds the order, so the
    /// picture is the truth of the moment (a void or a refund since the last run): each
    /// configured package until one knows it, the answer stored like the nightly run's (source
    /// `play_api`, and the lookup's answer for a ledger row, so the next run judges it without
    /// asking again). An order the job holds stays shown from what it holds when Google does not
    /// know it or cannot answer now. Without a service account: the white row when held, else
    /// the ledger's rows alone (`not_asked`), or, when the ledger has none either, the order
    /// cannot be looked up.
    private func lookUpPlayOrder(_ orderID: String, judgeBefore: Date, run: LookupRun, database: ConnectionLender)
        async throws -> (order: CustomerPicture.Order, transactions: [String])
    {
        let deliveries = settings.relations.deliveries
        let (held, deliveredAt) = try await database.run { connection -> (Bool, Date?) in
            let row = try connection.query(
                SQL.playOrder, ["order_id": orderID], relations: ["deliveries": deliveries])[0]
            return (try row.decode(Bool.self, at: 0), try row.decode(Date?.self, at: 1))
        }
        guard let lookups = playOrders else {
            if held { return (CustomerPicture.Order(orderID: orderID, status: .valid), [orderID]) }
            guard deliveredAt != nil else { throw DeskError.orderNeedsPlayAPI }
            return (CustomerPicture.Order(orderID: orderID, status: .notAsked), [orderID])
        }
        run.asked(.ordersGet)
        let answer = try await lookups.ask(orderID)
        if case .found(_, _, .some) = answer { run.asked(.purchaseState) }
        if held, !answer.isFound {
            logger.notice("Google did not confirm an order the job holds; shown as held", metadata: [
                "order.id": "\(orderID)", "google.answer": "\(answer)",
            ])
            return (CustomerPicture.Order(orderID: orderID, status: .valid), [orderID])
        }
        let environment = settings.environment
        try await database.run { connection in
            let runID = try run.id(environment: environment, on: connection)
            try connection.transaction {
                _ = try lookups.record(
                    answer, orderID: orderID, deliveredAt: deliveredAt, runID: runID, judgeBefore: judgeBefore,
                    on: connection)
            }
        }
        switch answer {
        case .found:
            return (CustomerPicture.Order(orderID: orderID, status: .valid), [orderID])
        case .notFound:
            // Google does not know it: the ledger's credit, if any, is shown with its verdict.
            return (CustomerPicture.Order(orderID: orderID, status: .invalid), deliveredAt == nil ? [] : [orderID])
        case .retry(let reason):
            throw DeskError.googleUnanswered(reason)
        }
    }

    /// Apple took longer than the lookup's limit.
    struct AppleTimeLimitReached: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "Apple did not answer within \(limit)" }
    }

    /// `body`, cancelled and replaced by `AppleTimeLimitReached` once `limit` has passed.
    static func bounded<T: Sendable>(
        _ limit: Duration?, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let limit else { return try await body() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                try Task.checkCancellation()
                throw AppleTimeLimitReached(limit: limit)
            }
            return value
        }
    }

    // MARK: - Which transactions

    /// The transactions a query names, from what the job already knows.
    func transactions(of query: DeskQuery, on connection: Connection) throws -> [String] {
        let rows: [Row]
        switch query.kind {
        case .order:
            rows = try connection.query(
                SQL.orderTransactions, ["order_id": query.value, "most": Self.maximumTransactions])
        case .transaction:
            return [query.value]
        case .user:
            let relations = settings.relations
            rows = try connection.query(
                SQL.userTransactions, ["user_id": query.value, "most": Self.maximumTransactions],
                relations: ["deliveries": relations.deliveries, "uploads": relations.uploads])
        case .token:
            rows = try connection.query(SQL.tokenTransactions, ["token": query.value, "most": Self.maximumTransactions])
        }
        return try rows.map { try $0.decode(String.self, at: 0) }
    }

    /// Uploads of the customer no run has seen yet are queued for the next run's verification, so
    /// that the diff calls what they carry `pending` rather than judging without them.
    private func queueUnseenUploads(of query: DeskQuery, ids: [String], on connection: Connection) throws {
        let uploads = ["uploads": settings.relations.uploads]
        try connection.execute(SQL.queueUnseenUploadsOfTransactions, ["transaction_ids": ids], relations: uploads)
        guard query.kind == .user else { return }
        try connection.execute(SQL.queueUnseenUploadsOfUser, ["user_id": query.value], relations: uploads)
    }

    // MARK: - Asking Apple

    /// Look Up Order ID (production only, at most ``orderLookupRate`` per second), then the
    /// customer's Get Transaction History; both stored as verified sources.
    private func lookUpOrder(_ orderID: String, api: ServerAPILookups, run: LookupRun, database: ConnectionLender)
        async throws -> (order: CustomerPicture.Order, transactions: [String])
    {
        run.asked(.lookUpOrderID)
        var configuration = api.client.configuration
        configuration.environments = [.production]
        configuration.productionRate = min(configuration.productionRate, Self.orderLookupRate)
        let outcome = try await AppStoreServerAPIClient.withClient(
            configuration: configuration, verifier: api.client.verifier
        ) { client in
            try await client.lookUpOrder(orderID, logger: logger)
        }
        let verified: VerifiedTransactions
        switch outcome {
        case .found(let answer):
            verified = answer
        case .notFound, .rejected:
            try await database.run { connection in
                try connection.execute(SQL.orderInvalid, ["order_id": orderID])
            }
            return (CustomerPicture.Order(orderID: orderID, status: .invalid), [])
        case .retryLater(let reason, _, _):
            throw DeskError.appleUnanswered(reason)
        case .unverifiable(let failure):
            throw DeskError.appleUnanswered("Look Up Order ID's answer does not verify: \(failure)")
        }
        if verified.transactions.isEmpty, let rejected = verified.rejected.first {
            throw DeskError.appleUnanswered("Look Up Order ID's transactions do not verify: \(rejected.failure)")
        }
        let records = verified.transactions.compactMap { AppleTransactionRecord($0, source: .orderLookup) }
            .filter { $0.fieldHoldingNUL == nil }
        let environment = settings.environment
        let runID = try await database.run { connection in
            let runID = try run.id(environment: environment, on: connection)
            try connection.transaction {
                try TransactionStore.upsert(records.map { ($0, nil) }, runID: runID, on: connection)
                try connection.execute(
                    SQL.orderValid,
                    ["order_id": orderID, "run_id": runID, "transaction_ids": records.map(\.transactionID)])
            }
            return runID
        }
        // The rest of the customer's purchases, refunds included: stored for the next run.
        if let first = records.first {
            run.asked(.transactionHistory)
            try await storeHistory(seed: first.transactionID, carrier: nil, api: api, runID: runID, database: database)
        }
        return (CustomerPicture.Order(orderID: orderID, status: .valid), records.map(\.transactionID))
    }

    /// With credentials: Get Transaction Info for the transactions no verified source holds (the
    /// nightly run's own lookup for ledger rows), and for an account, Get Transaction History
    /// until every Apple account it bought with is covered.
    private func askApple(
        about query: DeskQuery, ids: [String], api: ServerAPILookups, judgeBefore: Date, run: LookupRun,
        database: ConnectionLender
    ) async throws {
        let settings = self.settings
        let deliveries = settings.relations.deliveries
        let unknown = try await database.run { connection in
            try connection.query(
                SQL.unknownTransactions, ["transaction_ids": ids, "bundle_ids": settings.bundleIDs],
                relations: ["deliveries": deliveries]
            ).map { (try $0.decode(String.self, at: 0), try $0.decode(Date?.self, at: 1)) }
        }
        let runID = { @Sendable () async throws -> Int64 in
            try await database.run { try run.id(environment: settings.environment, on: $0) }
        }
        let delivered = unknown.compactMap { pair in pair.1.map { (pair.0, $0) } }
        if !delivered.isEmpty {
            run.asked(.transactionInfo)
            var summary = ServerAPILookups.Summary()
            var outage = ServerAPIOutage()
            try await api.lookUp(
                delivered, runID: try await runID(), judgeBefore: judgeBefore, database: database, into: &summary,
                outage: &outage)
        }
        // A transaction id nobody delivered nor uploaded: Apple may still know it.
        if query.kind == .transaction, let asked = unknown.first(where: { $0.1 == nil })?.0 {
            run.asked(.transactionInfo)
            if case .found(let info) = try await api.client.transactionInfo(for: asked, logger: logger),
                let record = AppleTransactionRecord(info, source: .serverAPI), record.fieldHoldingNUL == nil
            {
                let id = try await runID()
                try await database.run { try TransactionStore.upsert([(record, nil)], runID: id, on: $0) }
            }
        }
        guard query.kind == .user else { return }
        // One history per Apple account: each answer covers every transaction of that account,
        // so the next seed is a verified transaction no fetched history holds yet.
        let seeds = try await database.run { connection in
            try connection.query(SQL.historySeeds, ["user_id": query.value, "bundle_ids": settings.bundleIDs]).map { (try $0.decode(String.self, at: 0), try $0.decode(Int64.self, at: 1)) }
        }
        var covered = Set<String>()
        var calls = 0
        for (transaction, upload) in seeds where !covered.contains(transaction) && calls < Self.maximumHistories {
            calls += 1
            run.asked(.transactionHistory)
            covered.insert(transaction)
            covered.formUnion(
                try await storeHistory(
                    seed: transaction, carrier: Carrier(uploadID: upload, userID: query.value), api: api,
                    runID: try await runID(), database: database))
        }
    }

    /// With Play's service account: `orders.get` for the customer's Play ledger order ids no
    /// verified source holds, recorded as the nightly run records them. Whether it asked any.
    private func askGoogle(
        about ids: [String], lookups: PlayOrderLookups, judgeBefore: Date, run: LookupRun, database: ConnectionLender
    ) async throws -> Bool {
        guard !ids.isEmpty else { return false }
        let deliveries = settings.relations.deliveries
        let environment = settings.environment
        let unknown = try await database.run { connection in
            try connection.query(
                SQL.unknownPlayOrders, ["transaction_ids": ids], relations: ["deliveries": deliveries]
            ).map { (try $0.decode(String.self, at: 0), try $0.decode(Date.self, at: 1)) }
        }
        guard !unknown.isEmpty else { return false }
        run.asked(.ordersGet)
        let runID = try await database.run { try run.id(environment: environment, on: $0) }
        var summary = PlayRunSummary()
        var outage = 0
        try await lookups.lookUp(
            unknown, runID: runID, judgeBefore: judgeBefore, database: database, into: &summary, outage: &outage)
        return true
    }

    /// Get Transaction History for the account that owns `seed`, stored like the nightly run
    /// stores it; returns the transaction ids Apple listed.
    @discardableResult
    private func storeHistory(
        seed: String, carrier: Carrier?, api: ServerAPILookups, runID: Int64, database: ConnectionLender
    ) async throws -> [String] {
        switch try await api.client.transactionHistory(for: seed, logger: logger) {
        case .found(let history):
            let records = history.transactions.compactMap { AppleTransactionRecord($0, source: .serverAPI) }
                .filter { $0.fieldHoldingNUL == nil }
            try await database.run { connection in
                try connection.transaction {
                    try TransactionStore.upsert(records.map { ($0, carrier) }, runID: runID, on: connection)
                }
            }
            return records.map(\.transactionID)
        case .retryLater(let reason, _, _):
            logger.notice("transaction history not available now", metadata: ["reason": "\(reason)"])
        case .unverifiable(let failure):
            logger.warning("transaction history failed verification", metadata: ["reason": "\(failure)"])
        case .notFound, .rejected:
            logger.notice("transaction history refused", metadata: ["transaction.id": "\(seed)"])
        }
        return []
    }

    /// The desk's statements (`sql/desk/`).
    enum SQL {
        static let orderTransactions: SQLFile = "desk/order_transactions.sql"
        static let userTransactions: SQLFile = "desk/user_transactions.sql"
        static let tokenTransactions: SQLFile = "desk/token_transactions.sql"
        static let queueUnseenUploadsOfTransactions: SQLFile = "desk/queue_unseen_uploads_of_transactions.sql"
        static let queueUnseenUploadsOfUser: SQLFile = "desk/queue_unseen_uploads_of_user.sql"
        static let orderInvalid: SQLFile = "desk/order_invalid.sql"
        static let orderValid: SQLFile = "desk/order_valid.sql"
        static let unknownTransactions: SQLFile = "desk/unknown_transactions.sql"
        static let historySeeds: SQLFile = "desk/history_seeds.sql"
        static let lookupRun: SQLFile = "desk/lookup_run.sql"
        static let playOrder: SQLFile = "desk/play_order.sql"
        static let unknownPlayOrders: SQLFile = "desk/unknown_play_orders.sql"
        static let asynchronousCommit: SQLFile = "desk/asynchronous_commit.sql"
    }
}

/// The desk's entry in `reconcile.runs`, made the first time the lookup writes something that
/// needs a run (Apple's answers, review items): kind `lookup`, dry, finished at once, so it moves
/// no watermark and no worker joins it, and the next nightly run judges what it stored. Shared by
/// the lookup's steps, which run one after another.
final class LookupRun: Sendable {
    private let stored = Mutex<Int64?>(nil)
    private let sources = Mutex<[CustomerPicture.AskedSource]>([])

    /// Records that the lookup asked `source` (once each, in the order first asked).
    func asked(_ source: CustomerPicture.AskedSource) {
        sources.withLock { if !$0.contains(source) { $0.append(source) } }
    }

    /// What the lookup asked.
    var askedSources: [CustomerPicture.AskedSource] { sources.withLock { $0 } }

    var existingID: Int64? { stored.withLock { $0 } }

    func id(environment: Settings.Environment, on connection: Connection) throws -> Int64 {
        if let existingID { return existingID }
        let id = try connection.query(
            DeskService.SQL.lookupRun,
            ["environment": environment.rawValue, "host": ProcessInfo.processInfo.hostName,
             "pid": Int(ProcessInfo.processInfo.processIdentifier)]
        )[0].decode(Int64.self, at: 0)
        stored.withLock { $0 = id }
        return id
    }
}
