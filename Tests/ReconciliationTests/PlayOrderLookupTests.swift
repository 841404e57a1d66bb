import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Google's Orders API for Play ledger order ids no upload holds (SPEC section 18,
/// `unverified_delivery`), against the simulator's Google Play: an order Google knows is stored and
/// judged like an uploaded purchase, one it does not know is an `unverified_delivery` once the
/// account's uploads are verified, and one Google could not answer is left unjudged and asked again.
@Suite("Scenario: Google Play's Orders API for ledger order ids")
struct PlayOrderLookupTests {
    static let package = "com.hncs.szj.android"
    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })

    struct World {
        let database: TestDatabase
        let connection: Connection
        let sim: AppStoreSimulator
        let state: URL
        let bought: Date
    }

    static func world(_ name: String) throws -> World {
        let (database, connection) = try TestDatabase.migrated(name)
        try connection.executeScript("INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');")
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(
            stateDirectory: state, logger: logger, playPackageNames: [Self.package]))
        return World(database: database, connection: connection, sim: sim, state: state,
                     bought: Date().addingTimeInterval(-2 * 86_400))
    }

    static func deliver(_ order: String, to user: String, in world: World) throws {
        try world.connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ($1, $2, 'coin42', 1, $3)
            """, [order, user, world.bought])
    }

    static func settings(_ world: World, _ running: RunningSimulator, extra: [String: String] = [:]) async throws -> Settings {
        let play = try await running.playSettings()
        return try Settings(lookup: play.jobEnvironment.merging([
            "DATABASE_URL": world.database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "RECONCILE_REPORT_DIR": world.state.appendingPathComponent("reports-\(UUID().uuidString)").path,
            "RECONCILE_RECEIPT_VERIFICATION": "local", "RECONCILE_MAX_ATTEMPTS": "1",
        ].merging(extra) { $1 }) { $1 }.lookup)
    }

    static func lookups(_ connection: Connection) throws -> [String] {
        try connection.query("SELECT transaction_id, result, attempts FROM reconcile.transaction_lookups ORDER BY 1").map {
            "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1)) \(try $0.decode(Int.self, at: 2))"
        }
    }

    @Test func anOrderGoogleKnowsIsStoredAndJudgedAndOneItDoesNotIsUnverified() async throws {
        let world = try Self.world("play_orders")
        let millis = Int64(world.bought.timeIntervalSince1970 * 1000)
        let refunded = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "alice", acknowledged: true, purchaseTimeMillis: millis))
        _ = try world.sim.play.voidPurchase(refunded.purchaseToken)
        let paid = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "bob", acknowledged: true, purchaseTimeMillis: millis))
        let refundedOrder = try #require(refunded.orderId)
        let paidOrder = try #require(paid.orderId)
        let unknown = "GPA.9999-0000-0000-00001"
        try Self.deliver(refundedOrder, to: "alice", in: world)
        try Self.deliver(paidOrder, to: "bob", in: world)
        try Self.deliver(unknown, to: "carol", in: world)
        try await world.sim.withRunning { running in
            let settings = try await Self.settings(world, running)
            let report = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: world.bought.addingTimeInterval(-3600)))
            }
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-") \($0.userID ?? "-")" }.sorted() == [
                "refunded_delivery \(refundedOrder) alice", "unverified_delivery \(unknown) carol",
            ])
            #expect(report.status == .completed)
            #expect(report.play?.ordersAsked == 3)
            #expect(report.play?.ordersUnanswered == 0)
            #expect(try Self.lookups(world.connection) == [
                "\(unknown) not_found 1", "\(paidOrder) found 1", "\(refundedOrder) found 1",
            ].sorted())
            let stored = try world.connection.query(
                """
                SELECT store, source, obfuscated_account_id, purchase_token, revocation_date IS NOT NULL
                  FROM reconcile.apple_transactions WHERE transaction_id = $1
                """, [paidOrder])
            #expect(stored.count == 1)
            #expect(try stored[0].decode(String.self, at: 0) == "google_play")
            #expect(try stored[0].decode(String.self, at: 1) == "play_api")
            #expect(try stored[0].decode(String?.self, at: 2) == "bob")
            #expect(try stored[0].decode(String?.self, at: 3) == paid.purchaseToken)
            #expect(try stored[0].decode(Bool.self, at: 4) == false)
            #expect(world.sim.play.stats.requestsByEndpoint["orders"] == 3)

            // Answered for good: the next run asks Google nothing again.
            let again = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: world.bought.addingTimeInterval(-3600)))
            }
            #expect(again.play?.ordersAsked == 0)
            #expect(world.sim.play.stats.requestsByEndpoint["orders"] == 3)
        }
    }

    /// A Play order id of an account whose upload is still being verified is not asked (the upload
    /// may hold it; Google's daily Orders quota is not spent on it); once it is verified, it is.
    @Test func anAccountWithAnUploadStillBeingVerifiedIsNotAskedAbout() throws {
        let (_, connection) = try TestDatabase.migrated("play_orders_pending_user")
        let unknown = "GPA.9999-0000-0000-00002"
        try connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ($1, 'dave', 'coin42', 1, now() - interval '2 days')
            """, [unknown])
        let upload = try connection.query(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, uploaded_at)
            VALUES ('dave', 'play_purchase', '{"purchaseData": "{}", "signature": ""}', now()) RETURNING id
            """)[0].decode(Int64.self, at: 0)
        try connection.execute(
            "INSERT INTO reconcile.upload_verifications (upload_id, state, attempts) VALUES ($1, 'retry', 1)", [upload])
        func candidates() throws -> [String] {
            let relations = Differ.Relations.standard
            return try connection.query(
                ServerAPILookups.SQL.transactionInfoCandidates,
                ["since": Date.distantPast, "bundle_ids": [Self.package], "after": "",
                 "ledger_changes_after": try connection.query("SELECT pg_current_snapshot()::text")[0].decode(String.self, at: 0),
                 "unconfirmed_kinds": FindingKind.unconfirmedKinds, "store": Store.googlePlay.rawValue,
                 "users_verified": true],
                relations: ["deliveries": relations.deliveries, "uploads": relations.uploads]
            ).map { try $0.decode(String.self, at: 0) }
        }
        #expect(try candidates().isEmpty)
        try connection.execute("UPDATE reconcile.upload_verifications SET state = 'invalid'")
        #expect(try candidates() == [unknown])
    }

    /// Google answering 5xx: the delivery is left unjudged (no unverified_delivery), the run is
    /// completed_with_unresolved, and the next run asks again and judges.
    @Test func anOrderGoogleCouldNotAnswerIsUnjudgedAndAskedAgain() async throws {
        let world = try Self.world("play_orders_5xx")
        let millis = Int64(world.bought.timeIntervalSince1970 * 1000)
        let paid = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "bob", acknowledged: true, purchaseTimeMillis: millis))
        let paidOrder = try #require(paid.orderId)
        let unknown = "GPA.9999-0000-0000-00003"
        try Self.deliver(paidOrder, to: "bob", in: world)
        try Self.deliver(unknown, to: "carol", in: world)
        try await world.sim.withRunning { running in
            let settings = try await Self.settings(world, running)
            world.sim.state.faults = SimulatorFaults(play: PlaySimulatorFaults(http5xxShare: 1))
            let first = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: world.bought.addingTimeInterval(-3600)))
            }
            #expect(try first.findings.isEmpty)
            #expect(first.status == .completedWithUnresolved)
            #expect(first.play?.ordersAsked == 2)
            #expect(first.play?.ordersUnanswered == 2)
            #expect(try Self.lookups(world.connection) == ["\(unknown) retry 1", "\(paidOrder) retry 1"].sorted())

            world.sim.state.faults = .none
            let second = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: Date().addingTimeInterval(-3600)))
            }
            #expect(second.status == .completed)
            #expect(second.play?.ordersAsked == 2)
            #expect(try second.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-")" } == [
                "unverified_delivery \(unknown)",
            ])
            #expect(try Self.lookups(world.connection) == ["\(unknown) not_found 2", "\(paidOrder) found 2"].sorted())
        }
    }

    /// A ledger row names no package: each configured package is asked in turn until one knows
    /// the order (here the second), and an order none knows is asked of every one.
    @Test func eachPackageIsAskedUntilOneKnowsTheOrder() async throws {
        let (database, connection) = try TestDatabase.migrated("play_orders_packages")
        try connection.executeScript("INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');")
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(
            stateDirectory: state, logger: logger, playPackageNames: ["com.hncs.szj.lite", Self.package]))
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let world = World(database: database, connection: connection, sim: sim, state: state, bought: bought)
        let paid = try sim.play.createPurchase(.init(
            packageName: Self.package, productId: "coin42", obfuscatedAccountId: "bob", acknowledged: true,
            purchaseTimeMillis: Int64(bought.timeIntervalSince1970 * 1000)))
        let order = try #require(paid.orderId)
        try Self.deliver(order, to: "bob", in: world)
        try Self.deliver("GPA.9999-0000-0000-00004", to: "carol", in: world)
        try await sim.withRunning { running in
            let settings = try await Self.settings(world, running)
            #expect(settings.googlePlay.packageNames == ["com.hncs.szj.lite", Self.package])
            let report = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
            }
            #expect(try report.findings.map(\.kind) == [.unverifiedDelivery])
            #expect(sim.play.stats.requestsByEndpoint["orders"] == 4)
            #expect(try connection.query(
                "SELECT bundle_id FROM reconcile.apple_transactions WHERE transaction_id = $1", [order]
            )[0].decode(String.self, at: 0) == Self.package)
        }
    }

    /// Switching Play's API on changes the judged inputs' digest (Play's unverified deliveries then
    /// wait for the Orders API), and a deployment without Play keeps its digest.
    /// An order no upload held is bound by the purchase's own `obfuscatedExternalAccountId`: when
    /// that account first appears on a later night, the night's run judges the order again (its
    /// delivery long outside the window) and finds it credited to the wrong account, as one run
    /// over the whole history would (sql/diff/scope/changed_bindings.sql).
    @Test func anOrderBoundToAnAccountMetLaterIsJudgedTheNightItAppears() async throws {
        let world = try Self.world("play_orders_bound_later")
        let bought = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "carol", acknowledged: true,
            purchaseTimeMillis: Int64(world.bought.timeIntervalSince1970 * 1000)))
        let order = try #require(bought.orderId)
        try Self.deliver(order, to: "bob", in: world)
        try await world.sim.withRunning { running in
            let settings = try await Self.settings(world, running)
            let first = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: world.bought.addingTimeInterval(-3600)))
            }
            // Nobody called carol is known yet: the buyer is unknown, nothing to say.
            #expect(try first.findings.isEmpty)
            try world.connection.execute(
                "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1::uuid, 'carol')",
                [UUID().uuidString.lowercased()])
            let next = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: Date().addingTimeInterval(-3600)))
            }
            #expect(try next.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-") \($0.userID ?? "-")" } == [
                "wrong_account \(order) carol",
            ])
        }
    }

    /// A credit the app took back without a refund: the order is still asked (it says the
    /// purchase existed), and the purchase is a missed delivery, as a chain that asked before the
    /// revocation finds it.
    @Test func aRevokedCreditsOrderIsAskedAndItsPurchaseMissed() async throws {
        let world = try Self.world("play_orders_revoked_credit")
        let bought = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "dana", acknowledged: true,
            purchaseTimeMillis: Int64(world.bought.timeIntervalSince1970 * 1000)))
        let order = try #require(bought.orderId)
        try Self.deliver(order, to: "dana", in: world)
        try world.connection.execute("UPDATE reconcile.deliveries SET revoked_at = $1", [world.bought.addingTimeInterval(3600)])
        try await world.sim.withRunning { running in
            let settings = try await Self.settings(world, running)
            let report = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: world.bought.addingTimeInterval(-3600)))
            }
            #expect(report.play?.ordersAsked == 1)
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-") \($0.userID ?? "-")" } == [
                "missed_delivery \(order) dana",
            ])
        }
    }

    @Test func thePlayAPIIsPartOfTheJudgedInputs() throws {
        let base = ["DATABASE_URL": "postgresql://x@127.0.0.1/x", "RECONCILE_BUNDLE_IDS": "com.hncs.szj"]
        let apple = try Settings(lookup: base.lookup)
        let play = try Settings(lookup: base.merging([
            "GOOGLE_PLAY_PACKAGE_NAMES": Self.package, "GOOGLE_PLAY_LICENSE_KEYS": "\(Self.package)=AAAA",
        ]) { $1 }.lookup)
        var withAPI = play
        withAPI.googlePlay.serviceAccountFile = "/nonexistent/key.json"
        #expect(!apple.findingsKey.contains("play"))
        #expect(play.findingsKey != apple.findingsKey)
        #expect(withAPI.findingsKey != play.findingsKey)
        let parameters = Differ.Parameters(settings: withAPI, runID: 1, judgeBefore: Date(), scope: .wholeHistory(until: Date()))
        #expect(parameters.apiStores == [.googlePlay])
        #expect(Differ.Parameters(settings: play, runID: 1, judgeBefore: Date(), scope: .wholeHistory(until: Date())).apiStores
            == [])
    }
}
