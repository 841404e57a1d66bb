import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// The acknowledgement rescue through whole runs against the simulator's Google Play (SPEC section
/// 18, `RECONCILE_PLAY_ACKNOWLEDGE=on`): a paid purchase the ledger delivered to its buyer that
/// Google still reports unacknowledged is acknowledged, once, and Google no longer refunds it three
/// days later; one not delivered, or delivered to another account, never is; a dry run acknowledges
/// nothing.
@Suite("Scenario: Google Play acknowledgement rescue")
struct PlayAcknowledgementScenarioTests {
    static let package = "com.hncs.szj.android"
    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func deliveredPurchasesAreAcknowledgedOnceAndOthersNever() async throws {
        let (database, connection) = try TestDatabase.migrated("play_acknowledge")
        try connection.executeScript("""
            INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY'),
                                                  ('vip_month', 'auto_renewable', 30000, 'CNY');
            """)
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(
            stateDirectory: state, logger: logger, playPackageNames: [Self.package]))
        // Two days old: past the grace period, inside Google's three days.
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let millis = Int64(bought.timeIntervalSince1970 * 1000)
        func purchase(_ account: String?) throws -> CreatedPlayPurchase {
            try sim.play.createPurchase(.init(
                productId: "coin42", obfuscatedAccountId: account, acknowledged: false, purchaseTimeMillis: millis))
        }
        // Delivered to its bound buyer; delivered to its one uploader (no binding); never delivered;
        // bound to carol but credited to dave; delivered, and acknowledged by the app before the rescue.
        let alice = try purchase("alice"), frank = try purchase(nil), bob = try purchase("bob")
        let carol = try purchase("carol"), erin = try purchase("erin")
        // A subscription delivered to its buyer: purchases.subscriptions.acknowledge.
        let sam = try sim.play.createPurchase(.init(
            productId: "vip_month", kind: .subscription, obfuscatedAccountId: "sam", acknowledged: false,
            purchaseTimeMillis: millis))
        let uploads: [(String, CreatedPlayPurchase, String?)] = [
            ("alice", alice, "alice"), ("frank", frank, "frank"), ("bob", bob, nil), ("carol", carol, "dave"),
            ("erin", erin, "erin"), ("sam", sam, "sam"),
        ]
        for (user, purchase, credited) in uploads {
            let payload = String(decoding: try JSONSerialization.data(
                withJSONObject: ["purchaseData": purchase.purchaseData, "signature": purchase.signature]), as: UTF8.self)
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'play_purchase', $2, $3, $4)
                """, [user, payload, purchase.orderId, bought])
            if let credited {
                try connection.execute(
                    """
                    INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                    VALUES ($1, $2, $3, 1, $4)
                    """, [try #require(purchase.orderId), credited, purchase.productId, bought])
            }
        }
        func acknowledgedByGoogle() -> [String] {
            [("alice", alice), ("frank", frank), ("bob", bob), ("carol", carol), ("erin", erin), ("sam", sam)]
                .filter { sim.play.purchase($0.1.purchaseToken)?.acknowledged == true }.map(\.0)
        }
        func settled() throws -> [String] {
            try connection.query(
                "SELECT order_id, outcome, run_id FROM reconcile.play_acknowledgements ORDER BY order_id"
            ).map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1)) \(try $0.decode(Int64.self, at: 2))" }
        }
        try await sim.withRunning { running in
            let play = try await running.playSettings()
            let settings = try Settings(lookup: play.jobEnvironment.merging([
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports").path,
                "RECONCILE_RECEIPT_VERIFICATION": "local", "RECONCILE_PLAY_ACKNOWLEDGE": "on",
            ]) { $1 }.lookup)
            func run(dry: Bool = false) async throws -> RunReport {
                try await Stores.withJob(settings: settings, logger: Self.quiet) {
                    try await $0.run(.init(since: bought.addingTimeInterval(-3600), dryRun: dry))
                }
            }

            // A dry run acknowledges nothing, and records nothing.
            let dry = try await run(dry: true)
            #expect(dry.play?.acknowledged == 0)
            #expect(acknowledgedByGoogle() == [])
            #expect(try settled() == [])

            // The app acknowledges erin's purchase itself; the rows still say unacknowledged.
            _ = try sim.play.acknowledgeFromClient(erin.purchaseToken)
            let first = try await run()
            #expect(first.play?.acknowledged == 3)
            #expect(acknowledgedByGoogle() == ["alice", "frank", "erin", "sam"])
            #expect(try settled() == [
                "\(try #require(alice.orderId)) acknowledged \(first.runID)",
                "\(try #require(erin.orderId)) already_acknowledged \(first.runID)",
                "\(try #require(frank.orderId)) acknowledged \(first.runID)",
                "\(try #require(sam.orderId)) acknowledged \(first.runID)",
            ].sorted())
            let json = try String(
                contentsOfFile: try #require(first.reportDirectory) + "/report.json", encoding: .utf8)
            #expect(json.contains("\"acknowledged\": 3, \"voided_unacknowledged\": 0}"))
            let rows = try connection.query(
                """
                SELECT transaction_id FROM reconcile.apple_transactions
                 WHERE store = 'google_play' AND acknowledged ORDER BY transaction_id
                """).map { try $0.decode(String.self, at: 0) }
            #expect(rows == [alice.orderId, erin.orderId, frank.orderId, sam.orderId].compactMap { $0 }.sorted())

            // Acknowledging again counts nothing: each purchase is settled once.
            let second = try await run()
            #expect(second.play?.acknowledged == 0)
            #expect(try settled().count == 4)
            #expect(sim.play.stats.requestsByEndpoint["products.acknowledge"] == 2)
            #expect(sim.play.stats.requestsByEndpoint["subscriptions.acknowledge"] == 1)
        }

        // Three days on, Google refunds exactly the purchases nobody acknowledged.
        let refunded = try sim.play.expireUnacknowledged(now: Date().addingTimeInterval(2 * 86_400))
        #expect(Set(refunded.map(\.purchaseToken)) == [bob.purchaseToken, carol.purchaseToken])
    }

    /// A Google that cannot answer leaves the purchase for the next run, which acknowledges it.
    @Test func aGoogleThatCannotAnswerLeavesThePurchaseForTheNextRun() async throws {
        let (database, connection) = try TestDatabase.migrated("play_acknowledge_retry")
        try connection.executeScript("INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');")
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(
            stateDirectory: state, logger: logger, playPackageNames: [Self.package]))
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let alice = try sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "alice", acknowledged: false,
            purchaseTimeMillis: Int64(bought.timeIntervalSince1970 * 1000)))
        let payload = String(decoding: try JSONSerialization.data(
            withJSONObject: ["purchaseData": alice.purchaseData, "signature": alice.signature]), as: UTF8.self)
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
            VALUES ('alice', 'play_purchase', $1, $2, $3)
            """, [payload, alice.orderId, bought])
        try connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ($1, 'alice', 'coin42', 1, $2)
            """, [try #require(alice.orderId), bought])
        try await sim.withRunning { running in
            let play = try await running.playSettings()
            let settings = try Settings(lookup: play.jobEnvironment.merging([
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports").path,
                "RECONCILE_RECEIPT_VERIFICATION": "local", "RECONCILE_PLAY_ACKNOWLEDGE": "on",
                "RECONCILE_MAX_ATTEMPTS": "1",
            ]) { $1 }.lookup)
            func run() async throws -> RunReport {
                try await Stores.withJob(settings: settings, logger: Self.quiet) {
                    try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
                }
            }
            // The first run verifies the upload (so the purchase is a candidate) with acknowledge off…
            var off = settings
            off.googlePlay.acknowledge = false
            _ = try await Stores.withJob(settings: off, logger: Self.quiet) {
                try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
            }
            // …then Google answers every request 503.
            sim.state.faults = SimulatorFaults(play: PlaySimulatorFaults(http5xxShare: 1))
            let failed = try await run()
            #expect(failed.play?.acknowledged == 0)
            #expect(sim.play.purchase(alice.purchaseToken)?.acknowledged == false)
            #expect(try connection.query("SELECT 1 FROM reconcile.play_acknowledgements").isEmpty)
            // A service account Google refuses (401 permissionDenied) stops the run.
            sim.state.faults = SimulatorFaults(play: PlaySimulatorFaults(permissionDeniedShare: 1))
            await #expect(throws: RunConfigurationError.self) { _ = try await run() }
            sim.state.faults = .none
            let next = try await run()
            #expect(next.play?.acknowledged == 1)
            #expect(sim.play.purchase(alice.purchaseToken)?.acknowledged == true)
        }
    }
}
