import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// SPEC section 5 end to end: real PKCS#7 receipts issued by the simulator, uploaded, verified
/// through verifyReceipt over HTTP, diffed against a ledger in PostgreSQL. Every finding kind is
/// planted twice and every never-flag case once; the exact set of findings is asserted.
@Suite("Scenario: StoreKit 1 receipts through the simulator", .serialized)
struct ScenarioTests {
    static let bundle = "com.hncs.szj"
    let database: TestDatabase
    let reports = Scratch.root.appendingPathComponent("scenario-\(UUID().uuidString)")
    let old = Date().addingTimeInterval(-2 * 86_400)

    init() throws {
        database = try TestDatabase.create("scenario")
        _ = try Schema.migrate(try database.connect())
    }

    struct Finding: Hashable, CustomStringConvertible {
        let kind: String
        let transaction: String?
        let user: String?
        var description: String { "\(kind) \(transaction ?? "-") \(user ?? "-")" }
    }

    static let expected: Set<Finding> = [
        Finding(kind: "missed_delivery", transaction: "1001", user: "alice"),
        Finding(kind: "missed_delivery", transaction: "2001", user: "bob"),
        Finding(kind: "duplicate_delivery", transaction: "3001", user: "carol"),
        Finding(kind: "duplicate_delivery", transaction: "4001", user: "dave"),
        Finding(kind: "wrong_account", transaction: "5001", user: "erin"),
        Finding(kind: "wrong_account", transaction: "7001", user: "gina"),
        Finding(kind: "product_mismatch", transaction: "1002", user: "alice"),
        Finding(kind: "product_mismatch", transaction: "2002", user: "bob"),
        Finding(kind: "quantity_mismatch", transaction: "1003", user: "alice"),
        Finding(kind: "quantity_mismatch", transaction: "2003", user: "bob"),
        Finding(kind: "refunded_delivery", transaction: "3002", user: "carol"),
        Finding(kind: "refunded_delivery", transaction: "4002", user: "dave"),
        Finding(kind: "unverified_delivery", transaction: "9999", user: "ivan"),
        Finding(kind: "unverified_delivery", transaction: "10001", user: "judy"),
        Finding(kind: "environment_mismatch", transaction: "11001", user: "kate"),
        Finding(kind: "environment_mismatch", transaction: "12001", user: "leo"),
        Finding(kind: "foreign_bundle", transaction: "13001", user: "mia"),
        Finding(kind: "foreign_bundle", transaction: "14001", user: "nick"),
        Finding(kind: "shared_receipt", transaction: "15001", user: nil),
        Finding(kind: "shared_receipt", transaction: "17001", user: nil),
    ]

    // MARK: The world

    func seed(_ sim: AppStoreSimulator, forger: AppStoreSimulator) throws {
        let connection = try database.connect()
        try connection.executeScript(
            """
            INSERT INTO reconcile.products VALUES
                ('coin42', 'consumable', 6000, 'CNY'), ('coin4886', 'consumable', 648000, 'CNY'),
                ('unlock', 'non_consumable', 30000, 'CNY');
            """)
        func purchase(_ id: String, _ product: String = "coin42", original: String? = nil, quantity: Int = 1,
                      cancelled: Bool = false, at date: Date? = nil) -> SimulatedReceipt.Purchase {
            .init(productID: product, transactionID: id, originalTransactionID: original ?? id,
                  purchaseDate: date ?? old, quantity: quantity, cancellationDate: cancelled ? old : nil)
        }
        func receipt(_ purchases: [SimulatedReceipt.Purchase], bundle: String = Self.bundle,
                     environment: SimulatedReceipt.Environment = .production, by issuer: AppStoreSimulator? = nil)
            throws -> String
        {
            try (issuer ?? sim).issueReceipt(
                SimulatedReceipt(bundleID: bundle, environment: environment, purchases: purchases)).receiptData
        }
        func upload(_ user: String, _ payload: String, claimed: String? = nil, username: String? = nil) throws {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads
                    (user_id, kind, payload, application_username, claimed_transaction_id, device, uploaded_at)
                VALUES ($1, 'app_receipt', $2, $3, $4, '{"model": "iPhone15,2", "os": "17.5", "app": "4.2.0"}',
                        now() - interval '1 day')
                """, [user, payload, username, claimed])
        }
        func deliver(_ transaction: String, _ user: String, _ product: String = "coin42", quantity: Int = 1,
                     revoked: Bool = false) throws {
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at, revoked_at)
                VALUES ($1, $2, $3, $4, now() - interval '1 day', CASE WHEN $5 THEN now() END)
                """, [transaction, user, product, quantity, revoked])
        }
        let sha = { (text: String) in
            try connection.query("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", [text])[0].decode(String.self, at: 0)
        }

        // alice and bob: a missed order, a wrong product, a wrong quantity each.
        try upload("alice", receipt([purchase("1001"), purchase("1002"), purchase("1003", quantity: 2)]))
        try deliver("1002", "alice", "coin4886"); try deliver("1003", "alice", quantity: 1)
        try upload("bob", receipt([purchase("2001", "coin4886"), purchase("2002"), purchase("2003")]))
        try deliver("2002", "bob", "coin4886"); try deliver("2003", "bob", quantity: 5)
        // carol and dave: credited twice, and refunded but still credited.
        try upload("carol", receipt([purchase("3001"), purchase("3002", cancelled: true)]))
        try deliver("3001", "carol"); try deliver("3001", "carol"); try deliver("3002", "carol")
        try upload("dave", receipt([purchase("4001", "unlock"), purchase("4001r", "unlock", original: "4001"),
                                    purchase("4002", cancelled: true)]))
        try deliver("4001", "dave", "unlock"); try deliver("4001r", "dave", "unlock"); try deliver("4002", "dave")
        // erin bought (applicationUsername = SHA-256 of her id); frank's session uploaded and got it.
        try upload("erin", receipt([purchase("5000")])); try deliver("5000", "erin")
        try upload("frank", receipt([purchase("5001")]), claimed: "5001", username: try sha("erin"))
        try deliver("5001", "frank")
        // gina bought (applicationUsername = her id); hank uploaded and got it.
        try upload("gina", receipt([purchase("7000")])); try deliver("7000", "gina")
        try upload("hank", receipt([purchase("7001")]), claimed: "7001", username: "gina")
        try deliver("7001", "hank")
        // ivan was credited a transaction Apple never confirmed; judy's receipt is forged.
        try upload("ivan", receipt([purchase("8001")])); try deliver("8001", "ivan"); try deliver("9999", "ivan")
        try upload("judy", receipt([purchase("10001", "coin4886")], by: forger), claimed: "10001")
        try deliver("10001", "judy", "coin4886")
        // kate and leo: testers' sandbox purchases credited in production.
        try upload("kate", receipt([purchase("11001")], environment: .sandbox)); try deliver("11001", "kate")
        try upload("leo", receipt([purchase("12001")], environment: .sandbox)); try deliver("12001", "leo")
        // mia and nick: receipts of other apps.
        try upload("mia", receipt([purchase("13001")], bundle: "com.other.app"), claimed: "13001")
        try upload("nick", receipt([purchase("14001")], bundle: "com.evil.clone"), claimed: "14001")
        // A receipt replayed from another account: olga's by pete, quinn's by rose.
        let olgas = try receipt([purchase("15001")])
        try upload("olga", olgas); try upload("pete", olgas); try deliver("15001", "olga")
        let quinns = try receipt([purchase("17001")])
        try upload("quinn", quinns); try upload("rose", quinns); try deliver("17001", "quinn")

        // Never flagged.
        // sam: a consumable finished and gone from his later receipt, delivered once.
        try upload("sam", receipt([purchase("18001")])); try upload("sam", receipt([purchase("18002")]))
        try deliver("18001", "sam"); try deliver("18002", "sam")
        // tim: a restore of a non-consumable, delivered once for its original.
        try upload("tim", receipt([purchase("19001", "unlock"), purchase("19002", "unlock", original: "19001")]))
        try deliver("19001", "tim", "unlock")
        // vic: refunded and never delivered. wes: a sandbox purchase never delivered.
        try upload("vic", receipt([purchase("20001", cancelled: true)]))
        try upload("wes", receipt([purchase("21001")], environment: .sandbox))
        // xena: bought five minutes ago, inside the grace period.
        try upload("xena", receipt([purchase("22001", at: Date().addingTimeInterval(-300))]))
        // yara: refunded and the credit already revoked.
        try upload("yara", receipt([purchase("23001", cancelled: true)])); try deliver("23001", "yara", revoked: true)
    }

    // MARK: Running

    func settings(_ running: RunningSimulator, extra: [String: String] = [:]) throws -> Settings {
        try Settings(lookup: ([
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": Self.bundle,
            "APPLE_VERIFY_RECEIPT_URL": running.productionURL, "APPLE_VERIFY_RECEIPT_SANDBOX_URL": running.sandboxURL,
            "RECONCILE_REPORT_DIR": reports.path, "RECONCILE_CONCURRENCY": "4",
        ].merging(extra) { $1 }).lookup)
    }

    func run(_ settings: Settings, verifier: (any UploadVerifier)? = nil, since: Date? = nil) async throws -> RunReport {
        let logger = Logger(label: "scenario", factory: { _ in SwiftLogNoOpLogHandler() })
        if let verifier {
            return try await ReconciliationJob(settings: settings, verifier: verifier, logger: logger)
                .run(.init(since: since))
        }
        return try await AppleServices.withVerifier(settings: settings, logger: logger) { verifier in
            try await ReconciliationJob(settings: settings, verifier: verifier, logger: logger).run(.init(since: since))
        }
    }

    static func findings(_ report: RunReport) throws -> Set<Finding> {
        try Set(report.findings.map { Finding(kind: $0.kind.rawValue, transaction: $0.transactionID, user: $0.userID) })
    }

    static func quietSimulator() throws -> AppStoreSimulator {
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        return try AppStoreSimulator(configuration: .init(logger: logger))
    }

    // MARK: Tests

    @Test func findsExactlyThePlantedLeaksThenStaysIdempotent() async throws {
        let sim = try Self.quietSimulator()
        try seed(sim, forger: try Self.quietSimulator())
        try await sim.withRunning { running in
            let settings = try settings(running)
            let report = try await run(settings, since: old.addingTimeInterval(-86_400 * 3))
            let found = try Self.findings(report)
            #expect(found.subtracting(Self.expected).isEmpty, "unexpected \(found.subtracting(Self.expected))")
            #expect(Self.expected.subtracting(found).isEmpty, "missing \(Self.expected.subtracting(found))")
            #expect(report.status == "completed")
            #expect(report.verification.invalid == 1, "judy's forged receipt")
            for finding in try report.findings {
                #expect(finding.kind.suggestedAction == [
                    "missed_delivery": "grant", "duplicate_delivery": "revoke", "wrong_account": "move",
                    "refunded_delivery": "revoke",
                ][finding.kind.rawValue, default: "investigate"])
            }
            let verifications = sim.state.stats.verifyReceiptRequests

            // The same run again adds nothing and asks Apple nothing.
            let again = try await run(settings)
            #expect(again.newFindings == 0)
            #expect(try Self.findings(again) == Self.expected)
            #expect(sim.state.stats.verifyReceiptRequests == verifications)

            // A delivery for a missed order auto-resolves it; a dismissed item stays dismissed.
            let connection = try database.connect()
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, delivered_at)
                VALUES ('1001', 'alice', 'coin42', now())
                """)
            try connection.execute(
                """
                UPDATE reconcile.review_items SET status = 'dismissed', resolved_by = 'ana', note = 'tester'
                 WHERE fingerprint = 'environment_mismatch:11001'
                """)
            let third = try await run(settings)
            #expect(third.changes.autoResolved == 1)
            #expect(try !Self.findings(third).contains(Finding(kind: "missed_delivery", transaction: "1001", user: "alice")))
            #expect(try !Self.findings(third).contains { $0.transaction == "11001" }, "dismissed items are not open")
            let statuses = try connection.query(
                """
                SELECT fingerprint, status FROM reconcile.review_items
                 WHERE fingerprint IN ('missed_delivery:1001', 'environment_mismatch:11001') ORDER BY fingerprint
                """).map { try $0.decode(String.self, at: 1) }
            #expect(statuses == ["dismissed", "auto_resolved"])
            let items = try connection.query("SELECT count(*) FROM reconcile.review_items")[0].decode(Int.self, at: 0)
            #expect(items == Self.expected.count)
        }
    }

    @Test func anAppleAnswering21005JudgesNothingOnTheFailuresAndTheNextRunCompletesThem() async throws {
        let sim = try Self.quietSimulator()
        try seed(sim, forger: try Self.quietSimulator())
        try await sim.withRunning { running in
            let settings = try settings(running, extra: ["RECONCILE_CONCURRENCY": "1"])
            // One attempt per run so that the fault is not retried away within the run.
            let client = VerifyReceiptClient.Configuration(
                productionURL: running.productionURL, sandboxURL: running.sandboxURL,
                retry: .init(maxAttempts: 1), maxConcurrentRequests: 1)
            let logger = Logger(label: "scenario", factory: { _ in SwiftLogNoOpLogHandler() })
            var faults = SimulatorFaults.none
            faults.status21005Share = 1
            faults.remainingRequests = 9
            sim.state.faults = faults
            let first = try await VerifyReceiptClient.withClient(configuration: client) { client in
                try await run(settings, verifier: AppleUploadVerifier(
                    receiptClient: client, roots: .apple, bundleIDs: [Self.bundle], logger: logger),
                    since: old.addingTimeInterval(-86_400 * 3))
            }
            #expect(first.status == "completed_with_unresolved")
            #expect(first.verification.retry >= 8)
            let connection = try database.connect()
            let retrying = Set(try connection.query(
                """
                SELECT u.user_id FROM reconcile.upload_verifications v JOIN reconcile.receipt_uploads u ON u.id = v.upload_id
                 WHERE v.state = 'retry'
                """).map { try $0.decode(String.self, at: 0) })
            for finding in try Self.findings(first) {
                #expect(finding.user.map { !retrying.contains($0) } ?? true, "\(finding) depends on a retrying upload")
                #expect(Self.expected.contains(finding), "\(finding) is not a real leak")
            }
            #expect(retrying.count >= 8)
            #expect(try Self.findings(first).count < Self.expected.count, "the retrying uploads' findings wait")

            // Apple healthy again; the retries are due: the next run finishes the work.
            sim.state.faults = .none
            try connection.execute("UPDATE reconcile.upload_verifications SET next_attempt_at = now() WHERE state = 'retry'")
            let second = try await run(settings)
            #expect(second.status == "completed")
            #expect(try Self.findings(second) == Self.expected)
        }
    }
}
