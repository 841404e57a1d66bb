import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Synchronization
import Testing

/// The support desk (SPEC section 13) against the simulator and a real PostgreSQL: each kind of
/// lookup, verdicts from the nightly run's rules, and `--enqueue` sharing the run's fingerprints.
@Suite("Support desk: reconcile lookup")
struct DeskTests {
    static let dayAgo = Date().addingTimeInterval(-86_400)

    static func buy(
        _ sim: AppStoreSimulator, customer: String, order: String? = nil, at date: Date = dayAgo, token: UUID? = nil
    ) throws -> CreatedTransaction {
        var request = SimulatedTransaction(
            productId: "coin42", customer: customer, bundleId: "com.hncs.szj", environment: .production,
            type: .consumable, quantity: 1, purchaseDate: date, appAccountToken: token, price: 6000, currency: "CNY")
        request.orderId = order
        return try sim.createTransaction(request)
    }

    static func lookup(
        _ query: DeskQuery, settings: Settings, enqueue: Bool = false, on connection: Connection
    ) async throws -> CustomerPicture {
        let quiet = Logger(label: "desk", factory: { _ in SwiftLogNoOpLogHandler() })
        return try await AppleServices.withVerifier(settings: settings, logger: quiet) { verifier in
            try await AppleServices.withServerAPI(settings: settings, verifier: verifier, logger: quiet) { api in
                try await DeskService(settings: settings, serverAPI: api, logger: quiet)
                    .lookup(query, enqueue: enqueue, on: connection)
            }
        }
    }

    static func verdicts(_ picture: CustomerPicture) -> [String: String] {
        Dictionary(uniqueKeysWithValues: picture.transactions.map { ($0.transactionID, $0.verdict.rawValue) })
    }

    /// An order of two purchases, one credited and one no upload ever carried: Look Up Order ID
    /// finds both, the undelivered one is a missed delivery, `--enqueue` makes exactly one item,
    /// and neither a second enqueue nor the next nightly run makes another.
    @Test func anUndeliveredPurchaseFoundByOrderIDIsAMissedDeliveryEnqueuedOnce() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_order")
        let delivered = try Self.buy(sim, customer: "amy", order: "MKDESK0001")
        let missed = try Self.buy(sim, customer: "amy", order: "MKDESK0001")
        try connection.plantDelivery(delivered.transactionId, to: "amy", product: "coin42", age: "20 hours")
        try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            let picture = try await Self.lookup(try DeskQuery(.order, "mkdesk0001"), settings: settings, on: connection)
            #expect(picture.order == CustomerPicture.Order(orderID: "MKDESK0001", status: .valid))
            #expect(Self.verdicts(picture) == [
                delivered.transactionId: "ok", missed.transactionId: "missed_delivery",
            ])
            #expect(picture.transactions.allSatisfy { $0.sources.contains("order_lookup") })
            #expect(try connection.query("SELECT 1 FROM reconcile.review_items").isEmpty, "no --enqueue, no item")

            for _ in 0..<2 {
                let enqueued = try await Self.lookup(
                    try DeskQuery(.order, "MKDESK0001"), settings: settings, enqueue: true, on: connection)
                #expect(enqueued.transactions.first { $0.transactionID == missed.transactionId }?.reviewItems
                    .map(\.kind) == [.missedDelivery])
            }
            let report = try await ServerAPIScenarioTests.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }
                == ["missed_delivery \(missed.transactionId)"])
            let items = try connection.query("SELECT kind, transaction_id, status FROM reconcile.review_items")
            #expect(items.count == 1)
            #expect(try items.first?.decode(String.self, at: 1) == missed.transactionId)
            #expect(try items.first?.decode(String.self, at: 2) == "open")
            // The lookup's run moved no watermark: the nightly run's is the last finished one.
            let kinds = try connection.query("SELECT kind, dry_run FROM reconcile.runs ORDER BY id")
                .map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(Bool.self, at: 1))" }
            #expect(kinds.first == "lookup true")
            #expect(kinds.last == "run false")
        }
    }

    /// An order ID Apple does not know for this app is said plainly, and nothing is judged.
    @Test func anInvalidOrderIsEmptyAndMarkedInvalid() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_invalid")
        _ = try Self.buy(sim, customer: "amy", order: "MKDESK0002")
        try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            let picture = try await Self.lookup(try DeskQuery(.order, "MKNOSUCH00"), settings: settings, on: connection)
            #expect(picture.order?.status == .invalid)
            #expect(picture.isEmpty)
        }
    }

    /// Without Server API credentials an order ID cannot be looked up, and the desk says why.
    @Test func anOrderWithoutCredentialsIsRefused() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_nocreds")
        try await sim.withRunning { running in
            let settings = try Self.settingsWithoutServerAPI(database: database, running: running, state: state)
            await #expect(throws: DeskError.orderNeedsServerAPI) {
                _ = try await Self.lookup(try DeskQuery(.order, "MKDESK0003"), settings: settings, on: connection)
            }
        }
    }

    /// A plain lookup commits without waiting for the WAL to reach the disk
    /// (sql/desk/asynchronous_commit.sql); one that enqueues review items waits. Only the lookup's
    /// own transaction does either: the connection, which the pages lend to a decision next,
    /// commits synchronously again once the lookup is done.
    @Test(arguments: [false, true])
    func onlyAPlainLookupCommitsWithoutWaitingForTheDisk(enqueue: Bool) async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_async_commit_\(enqueue)")
        let bought = try Self.buy(sim, customer: "dee")
        try connection.plantDelivery(bought.transactionId, to: "dee", product: "coin42", age: "20 hours")
        // The test cluster commits asynchronously throughout (scripts/pg); a server does not.
        try connection.execute("SET synchronous_commit = on")
        let quiet = Logger(label: "desk", factory: { _ in SwiftLogNoOpLogHandler() })
        // The details step runs inside the lookup's transaction, on the lookup's connection.
        nonisolated(unsafe) let inside = connection
        let during = Mutex<String?>(nil)
        try await sim.withRunning { running in
            let settings = try Self.settingsWithoutServerAPI(database: database, running: running, state: state)
            let picture = try await DeskService(settings: settings, serverAPI: nil, logger: quiet).lookup(
                try DeskQuery(.user, "dee"), enqueue: enqueue, database: .holding(connection),
                details: { bare in
                    during.withLock { $0 = try? inside.query("SHOW synchronous_commit")[0].decode(String.self, at: 0) }
                    return bare.map(\.transactionID)
                })
            #expect(picture.transactions.map(\.transactionID) == [bought.transactionId])
        }
        #expect(during.withLock { $0 } == (enqueue ? "on" : "off"))
        #expect(try connection.query("SHOW synchronous_commit")[0].decode(String.self, at: 0) == "on")
    }

    /// A purchase younger than the grace period is `pending`, whatever the ledger says; the same
    /// purchase an hour old and credited is `ok`.
    @Test func aYoungPurchaseIsPendingAndADeliveredOneOK() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_young")
        let young = try Self.buy(sim, customer: "bob", at: Date().addingTimeInterval(-300))
        let old = try Self.buy(sim, customer: "bob", at: Date().addingTimeInterval(-3600))
        try connection.plantDelivery(old.transactionId, to: "bob", product: "coin42", age: "50 minutes")
        try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            let fresh = try await Self.lookup(
                try DeskQuery(.transaction, young.transactionId), settings: settings, on: connection)
            #expect(Self.verdicts(fresh) == [young.transactionId: "pending"])
            #expect(fresh.transactions.first?.sources == ["server_api"])
            let credited = try await Self.lookup(
                try DeskQuery(.transaction, old.transactionId), settings: settings, on: connection)
            #expect(Self.verdicts(credited) == [old.transactionId: "ok"])
            #expect(credited.transactions.first?.deliveries.map(\.userID) == ["bob"])
        }
    }

    /// One app account that bought with two Apple accounts (a phone and a family iPad): the
    /// lookup reads both histories, so a purchase of each that no upload carried is found, and
    /// the token lookup finds what that token bought.
    @Test func aUserWithPurchasesFromTwoAppleAccounts() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_two_accounts")
        let token = UUID()
        let phone = try Self.buy(sim, customer: "cat-phone", token: token)
        let phoneMissed = try Self.buy(sim, customer: "cat-phone")
        let pad = try Self.buy(sim, customer: "cat-ipad")
        let padMissed = try Self.buy(sim, customer: "cat-ipad")
        for transaction in [phone, pad] {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ('cat', 'signed_transaction', $1, $2, now() - interval '20 hours')
                """, [transaction.signedTransaction, transaction.transactionId])
            try connection.plantDelivery(transaction.transactionId, to: "cat", product: "coin42", age: "20 hours")
        }
        try await sim.withRunning { running in
            // The nightly run verified the uploads without the Server API; the desk has it.
            let local = try Self.settingsWithoutServerAPI(database: database, running: running, state: state)
            let nightly = try await ServerAPIScenarioTests.run(
                local, since: Date().addingTimeInterval(-3 * 86_400), serverAPI: false)
            #expect(try nightly.findings.isEmpty)

            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            let picture = try await Self.lookup(try DeskQuery(.user, "cat"), settings: settings, on: connection)
            #expect(Self.verdicts(picture) == [
                phone.transactionId: "ok", pad.transactionId: "ok",
                phoneMissed.transactionId: "missed_delivery", padMissed.transactionId: "missed_delivery",
            ])
            let missed = picture.transactions.filter { $0.verdict == "missed_delivery" }
            #expect(missed.allSatisfy { $0.buyer == CustomerPicture.Buyer(userID: "cat", basis: "uploader") })
            #expect(missed.allSatisfy { $0.sources == ["server_api"] })

            let byToken = try await Self.lookup(
                try DeskQuery(.token, token.uuidString), settings: settings, on: connection)
            #expect(byToken.transactions.map(\.transactionID) == [phone.transactionId])
            #expect(byToken.transactions.first?.uploads.map(\.userID) == ["cat"])
        }
    }

    /// A transaction with findings of two severities takes the most severe as its verdict: a
    /// purchase bound to amy's token and credited twice to eve is a `wrong_account` (high) first,
    /// though `duplicate_delivery` (medium) sorts before it by name.
    @Test func theVerdictIsTheMostSevereFinding() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_severity")
        let token = UUID()
        try connection.execute(
            "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1::uuid, 'amy')",
            [token.uuidString])
        let bought = try Self.buy(sim, customer: "amy-phone", token: token)
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
            VALUES ('amy', 'signed_transaction', $1, $2, now() - interval '20 hours')
            """, [bought.signedTransaction, bought.transactionId])
        for hours in [20, 19] {
            try connection.plantDelivery(bought.transactionId, to: "eve", product: "coin42", age: "\(hours) hours")
        }
        try await sim.withRunning { running in
            let settings = try Self.settingsWithoutServerAPI(database: database, running: running, state: state)
            let nightly = try await ServerAPIScenarioTests.run(
                settings, since: Date().addingTimeInterval(-3 * 86_400), serverAPI: false)
            #expect(Set(try nightly.findings.map(\.kind)).isSuperset(of: [.wrongAccount, .duplicateDelivery]))
            let picture = try await Self.lookup(
                try DeskQuery(.transaction, bought.transactionId), settings: settings, on: connection)
            #expect(Self.verdicts(picture) == [bought.transactionId: "wrong_account"])
            let itemKinds = Set(picture.transactions.flatMap(\.reviewItems).map(\.kind))
            #expect(itemKinds.isSuperset(of: [.wrongAccount, .duplicateDelivery]))
        }
    }

    @Test(arguments: [
        ("MK5TTY6V5X", DeskQuery.Kind.order), ("2000000123456789", .transaction),
        ("5c5c3d1e-8d8e-4a53-9f0e-3a1c2b4d5e6f", .token), ("amy", .user), ("mk5tty6v5x", .user),
    ])
    func oneSearchFieldRecognisesWhatItHolds(text: String, kind: DeskQuery.Kind) throws {
        #expect(try DeskQuery.recognising(text).kind == kind)
    }

    @Test func aQueryOutOfShapeIsRefused() throws {
        #expect(throws: DeskError.self) { try DeskQuery(.transaction, "12ab") }
        #expect(throws: DeskError.self) { try DeskQuery(.token, "not-a-uuid") }
        #expect(throws: DeskError.self) { try DeskQuery(.order, String(repeating: "X", count: 300)) }
        // An account id of kilobytes is looked up (a ledger may hold one); beyond 16 KiB it is refused.
        let longest = String(repeating: "x", count: DeskQuery.maximumUserLength)
        #expect(try DeskQuery(.user, longest).value == longest)
        #expect(throws: DeskError.self) {
            try DeskQuery(.user, String(repeating: "x", count: DeskQuery.maximumUserLength + 1))
        }
        #expect(throws: DeskError.self) { try DeskQuery(.order, "MK5/../X") }
        // The one search field (the web's) holds 256 bytes, whatever it holds.
        #expect(throws: DeskError.self) { try DeskQuery.recognising(String(repeating: "x", count: 300)) }
    }

    static func settingsWithoutServerAPI(database: TestDatabase, running: RunningSimulator, state: URL) throws
        -> Settings
    {
        try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "APPLE_VERIFY_RECEIPT_URL": running.productionURL,
            "APPLE_VERIFY_RECEIPT_SANDBOX_URL": running.sandboxURL,
            "APPLE_ROOT_CERTIFICATES": state.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path,
            "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports").path,
        ].lookup)
    }
}
