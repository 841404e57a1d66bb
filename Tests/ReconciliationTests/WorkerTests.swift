import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// SPEC section 11, scale-out, counted where it matters: at Apple. A run and two workers share one
/// window against the simulator with latency (so that they overlap); the simulator counts the
/// verifyReceipt requests for each receipt.
@Suite("Workers counted at the simulator")
struct WorkerTests {
    static let bundle = "com.hncs.szj"
    static let uploads = 120

    struct Finding: Hashable, CustomStringConvertible {
        var kind: String
        var transaction: String?
        var user: String?
        var description: String { "\(kind) \(transaction ?? "-") \(user ?? "-")" }
    }

    /// The same uploads and ledger in a fresh database: a third of the purchases never delivered,
    /// a third delivered as another product, and one forged receipt credited.
    static func seed(_ receipts: [String], forged: String) throws -> TestDatabase {
        let (database, connection) = try TestDatabase.migrated("workers")
        for (index, receipt) in receipts.enumerated() {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'app_receipt', $2, $3, now() - interval '20 hours')
                """, ["player-\(index % 40)", receipt, "W-\(index)"])
            guard index % 3 != 0 else { continue }
            try connection.plantDelivery(
                "W-\(index)", to: "player-\(index % 40)", product: index % 3 == 1 ? "coin42" : "coin4886",
                age: "20 hours")
        }
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
            VALUES ('mallory', 'app_receipt', $1, 'W-FORGED', now() - interval '20 hours')
            """, [forged])
        try connection.plantDelivery("W-FORGED", to: "mallory", product: "coin4886", age: "20 hours")
        return database
    }

    static func settings(_ database: TestDatabase, _ running: RunningSimulator) throws -> Settings {
        try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": bundle,
            "APPLE_VERIFY_RECEIPT_URL": running.productionURL, "APPLE_VERIFY_RECEIPT_SANDBOX_URL": running.sandboxURL,
            "RECONCILE_REPORT_DIR": Scratch.root.appendingPathComponent("workers").path,
            "RECONCILE_CONCURRENCY": "4",
        ].lookup)
    }

    static let quiet = Logger(label: "workers", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A run, as `reconcile run` makes it: its own verifier and HTTP client.
    static func run(_ settings: Settings) async throws -> RunReport {
        try await AppleServices.withVerifier(settings: settings, logger: quiet) { verifier in
            try await ReconciliationJob(settings: settings, verifier: verifier, logger: quiet, batchSize: 8)
                .run(.init(since: Date().addingTimeInterval(-3 * 86_400)))
        }
    }

    /// A worker, as `reconcile run --worker` makes it.
    static func work(_ settings: Settings) async throws -> Int {
        try await AppleServices.withVerifier(settings: settings, logger: quiet) { verifier in
            try await ReconciliationJob(settings: settings, verifier: verifier, logger: quiet, batchSize: 8).work()
        }
    }

    static func findings(_ report: RunReport) throws -> Set<Finding> {
        try Set(report.findings.map { Finding(kind: $0.kind.rawValue, transaction: $0.transactionID, user: $0.userID) })
    }

    @Test func aRunAndTwoWorkersAskAppleOnceAboutEachReceiptAndFindWhatOneProcessFinds() async throws {
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        var faults = SimulatorFaults.none
        // Apple slow enough that verifying takes seconds: two workers joining late on a loaded
        // machine still find uploads left to verify.
        faults.latencyMilliseconds = 250
        let sim = try AppStoreSimulator(configuration: .init(faults: faults, logger: logger))
        let dayAgo = Date().addingTimeInterval(-86_400)
        let receipts = try (0..<Self.uploads).map { index in
            try sim.issueReceipt(SimulatedReceipt(
                bundleID: Self.bundle, environment: .production,
                purchases: [.init(productID: "coin42", transactionID: "W-\(index)", purchaseDate: dayAgo)])).receiptData
        }
        let forged = try AppStoreSimulator(configuration: .init(logger: logger)).issueReceipt(SimulatedReceipt(
            bundleID: Self.bundle, environment: .production,
            purchases: [.init(productID: "coin4886", transactionID: "W-FORGED", purchaseDate: dayAgo)])).receiptData
        let shared = try Self.seed(receipts, forged: forged)
        let alone = try Self.seed(receipts, forged: forged)

        try await sim.withRunning { running in
            let settings = try Self.settings(shared, running)
            let coordinator = Task { try await Self.run(settings) }
            // The workers join once the run is verifying, as they would a minute after cron started it.
            let connection = try shared.connect()
            let deadline = Date().addingTimeInterval(30)
            while try connection.query(
                "SELECT count(*) FROM reconcile.upload_verifications WHERE claimed_at IS NOT NULL OR state <> 'pending'"
            )[0].decode(Int.self, at: 0) == 0 {
                guard Date() < deadline else { throw TestSetupError("the run never started verifying") }
                try await Task.sleep(for: .milliseconds(5))
            }
            async let first = Self.work(settings)
            async let second = Self.work(settings)
            let helped = try await [first, second]
            let report = try await coordinator.value

            #expect(helped.allSatisfy { $0 > 0 }, "every worker verified some uploads: \(helped)")
            #expect(helped.reduce(0, +) < Self.uploads + 1, "the run verified some itself: \(helped)")
            #expect(report.status == "completed")
            #expect(report.verification.uploads == Self.uploads + 1)
            #expect(report.verification.verified == Self.uploads && report.verification.invalid == 1)
            let requests = sim.state.receiptRequests
            #expect(requests.untracked == 0 && requests.requests.count == Self.uploads + 1)
            for receipt in receipts + [forged] {
                #expect(requests.total(receipt) == 1, "verifyReceipt asked \(requests.total(receipt)) times")
            }
            #expect(sim.state.stats.verifyReceiptRequests == Self.uploads + 1)
            let attempts = try connection.query(
                "SELECT attempts, count(*) FROM reconcile.upload_verifications GROUP BY attempts"
            ).map { "\(try $0.decode(Int.self, at: 0)):\(try $0.decode(Int.self, at: 1))" }
            #expect(attempts == ["1:\(Self.uploads + 1)"])

            // The same data through one process gives the same findings.
            sim.state.resetStats()
            let single = try await Self.run(try Self.settings(alone, running))
            #expect(sim.state.stats.verifyReceiptRequests == Self.uploads + 1)
            #expect(try Self.findings(single) == Self.findings(report))
            #expect(try Self.findings(report).count == 2 * Self.uploads / 3 + 1)
            #expect(try Self.findings(report).contains(Finding(kind: "unverified_delivery", transaction: "W-FORGED", user: "mallory")))
        }
    }
}
