import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// Answers like Apple from a script: the upload's payload names the transaction it carries;
/// payloads listed in `failing` get a retry verdict until `heal()` is called.
final class ScriptedVerifier: UploadVerifier, @unchecked Sendable {
    private let lock = NSLock()
    private var failing: Set<String>
    private(set) var calls: [Int64] = []
    let delay: Duration

    init(failing: Set<String> = [], delay: Duration = .zero) {
        self.failing = failing
        self.delay = delay
    }

    func heal() { lock.withLock { failing = [] } }

    func verify(_ upload: Upload, attempt: Int) async throws -> Verdict {
        if delay > .zero { try await Task.sleep(for: delay) }
        let fails = lock.withLock {
            calls.append(upload.id)
            return failing.contains(upload.payload)
        }
        if fails { return .retry(reason: "status 21005: server unavailable", appleStatus: 21005) }
        if upload.payload.hasPrefix("forged") {
            return .invalid(code: "signature", reason: "the signature does not verify", appleStatus: nil)
        }
        let transaction = AppleTransactionRecord(
            transactionID: upload.payload, originalTransactionID: upload.payload, productID: "coin42",
            productType: "consumable", bundleID: "com.hncs.szj", environment: "Production",
            purchaseDate: Date().addingTimeInterval(-86_400), priceMilli: 6000, currency: "CNY",
            signedDate: Date(), source: "jws")
        return .verified(VerifiedUpload(method: "jws", appleStatus: nil, environment: "Production",
                                        bundleID: "com.hncs.szj", transactions: [transaction]))
    }
}

@Suite("Reconciliation job", .serialized)
struct JobTests {
    let database: TestDatabase
    let reports: URL

    init() throws {
        database = try TestDatabase.create("job")
        reports = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID().uuidString)")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        // Six uploads of one transaction each; two delivered, four missed; one forged.
        for (index, payload) in ["tx-1", "tx-2", "tx-3", "tx-4", "tx-5", "forged-6"].enumerated() {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'signed_transaction', $2, $2, now() - interval '1 day')
                """, ["user-\(index)", payload])
        }
        try connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, delivered_at)
            VALUES ('tx-1', 'user-0', 'coin42', now() - interval '1 day'),
                   ('tx-2', 'user-1', 'coin42', now() - interval '1 day'),
                   ('forged-6', 'user-5', 'coin4886', now() - interval '1 day')
            """)
    }

    func settings() throws -> Settings {
        try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "RECONCILE_REPORT_DIR": reports.path,
        ].lookup)
    }

    func job(_ verifier: ScriptedVerifier) throws -> ReconciliationJob {
        ReconciliationJob(settings: try settings(), verifier: verifier, logger: Logger(label: "test"), batchSize: 2)
    }

    @Test func aRunVerifiesJudgesAndReports() async throws {
        let verifier = ScriptedVerifier()
        let report = try await job(verifier).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(report.status == "completed")
        #expect(report.verification.uploads == 6 && report.verification.verified == 5 && report.verification.invalid == 1)
        #expect(try Set(report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }) == [
            "missed_delivery tx-3", "missed_delivery tx-4", "missed_delivery tx-5", "unverified_delivery forged-6",
        ])
        #expect(verifier.calls.count == 6)

        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: reports.appendingPathComponent("run-\(report.runID)/report.json"))) as! [String: Any]
        #expect(Set(json.keys) == ["run_id", "status", "started_at", "finished_at", "window", "environment",
                                   "verification", "counts", "value_at_risk", "findings"])
        let counts = json["counts"] as! [String: Int]
        #expect(counts.count == 10 && counts["missed_delivery"] == 3 && counts["wrong_account"] == 0)
        let risk = json["value_at_risk"] as! [[String: Any]]
        #expect(risk.contains { $0["kind"] as? String == "missed_delivery" && $0["currency"] as? String == "CNY"
            && $0["amount_milli"] as? Int == 18_000 })
        let finding = (json["findings"] as! [[String: Any]]).first!
        #expect(Set(finding.keys) == ["review_item_id", "new", "kind", "severity", "transaction_id",
                                      "original_transaction_id", "user_id", "product_id", "suggested_action", "evidence"])
        #expect(FileManager.default.fileExists(atPath: reports.appendingPathComponent("run-\(report.runID)/report.md").path))
        let csv = try String(contentsOf: reports.appendingPathComponent("run-\(report.runID)/review.csv"), encoding: .utf8)
        #expect(csv.split(separator: "\r\n").count == 5)

        // Again: nothing new, nothing verified twice.
        let again = try await job(verifier).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(try again.newFindings == 0 && again.findings.count == 4)
        #expect(verifier.calls.count == 6)
    }

    @Test func passingFailuresAreRetriedByTheNextRunAndJudgeNothingMeanwhile() async throws {
        let verifier = ScriptedVerifier(failing: ["tx-3", "tx-4"])
        let first = try await job(verifier).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(first.status == "completed_with_unresolved")
        #expect(first.verification.retry == 2)
        #expect(try !first.findings.contains { ["tx-3", "tx-4"].contains($0.transactionID) })
        // The forged delivery belongs to a user with nothing pending: still judged.
        #expect(try first.findings.contains { $0.transactionID == "forged-6" })

        verifier.heal()
        let connection = try database.connect()
        try connection.execute("UPDATE reconcile.upload_verifications SET next_attempt_at = now() WHERE state = 'retry'")
        let second = try await job(verifier).run(.init())
        #expect(second.status == "completed")
        #expect(try second.findings.filter(\.isNew).compactMap(\.transactionID).sorted() == ["tx-3", "tx-4"])
    }

    @Test func aDryRunWritesNoReviewItems() async throws {
        let report = try await job(ScriptedVerifier()).run(.init(since: Date().addingTimeInterval(-7 * 86_400), dryRun: true))
        #expect(try report.findings.count == 4)
        let items = try database.connect().query("SELECT count(*) FROM reconcile.review_items")[0].decode(Int.self, at: 0)
        #expect(items == 0)
    }

    @Test func aSecondConcurrentRunIsRefusedWithTheHolder() async throws {
        let slow = ScriptedVerifier(delay: .milliseconds(300))
        let first = Task { try await job(slow).run(.init(since: Date().addingTimeInterval(-7 * 86_400))) }
        try await Task.sleep(for: .milliseconds(200))
        let error = await #expect(throws: RunLockedError.self) {
            try await job(ScriptedVerifier()).run(.init())
        }
        #expect(error?.description.contains("holds the lock") == true)
        #expect(try await first.value.status == "completed")
    }

    @Test func workersShareTheRunAndVerifyEachUploadOnce() async throws {
        let connection = try database.connect()
        for index in 100..<140 {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'signed_transaction', $2, $2, now() - interval '1 day')
                """, ["user-\(index)", "tx-\(index)"])
        }
        let verifier = ScriptedVerifier(delay: .milliseconds(40))
        let coordinator = Task { try await job(verifier).run(.init(since: Date().addingTimeInterval(-7 * 86_400))) }
        try await Task.sleep(for: .milliseconds(150))
        let helped = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 { group.addTask { try await job(verifier).work() } }
            return try await group.reduce(0, +)
        }
        let report = try await coordinator.value
        #expect(verifier.calls.count == 46, "every upload verified exactly once")
        #expect(Set(verifier.calls).count == 46)
        #expect(helped > 0, "the workers took part")
        #expect(try report.verification.uploads == 46 && report.findings.count == 44)
    }

    @Test func aCancelledRunIsRecordedAsInterruptedAndTheNextOneResumes() async throws {
        let slow = ScriptedVerifier(delay: .milliseconds(500))
        let run = Task { try await job(slow).run(.init(since: Date().addingTimeInterval(-7 * 86_400))) }
        try await Task.sleep(for: .milliseconds(300))
        run.cancel()
        await #expect(throws: CancellationError.self) { try await run.value }
        let connection = try database.connect()
        let status = try connection.query("SELECT status, error FROM reconcile.runs ORDER BY id")
        #expect(try status.map { try $0.decode(String.self, at: 0) } == ["interrupted"])
        #expect(try status[0].decode(String.self, at: 1).contains("next run resumes"))
        // The interrupted batch is still claimed; the next run releases it instead of waiting out the lease.
        let claimed = try connection.query(
            "SELECT count(*) FROM reconcile.upload_verifications WHERE claimed_at IS NOT NULL")[0].decode(Int.self, at: 0)
        #expect(claimed > 0)
        let queue = VerificationQueue(uploads: "reconcile.receipt_uploads", maxAttempts: 5)
        let next = try await job(ScriptedVerifier()).run(.init())
        #expect(try queue.othersAreWorking(runID: next.runID, on: connection) == false)
        #expect(try next.status == "completed" && next.findings.count == 4)
    }

    @Test(arguments: [
        "o'brien\\\"; DROP TABLE reconcile.runs; --",
        "100%_off\t\u{7}\u{1b}[31m",
        "用户-🎉-" + String(repeating: "x", count: 10_000),
    ])
    func hostileValuesGoThroughUntouched(_ user: String) async throws {
        let connection = try database.connect()
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
            VALUES ($1, 'signed_transaction', 'tx-hostile', 'tx-hostile', now() - interval '1 day')
            """, [user])
        let report = try await job(ScriptedVerifier()).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        let finding = try #require(try report.findings.first { $0.transactionID == "tx-hostile" })
        #expect(finding.userID == user)
        let stored = try connection.query(
            "SELECT user_id FROM reconcile.review_items WHERE transaction_id = 'tx-hostile'")[0].decode(String.self, at: 0)
        #expect(stored == user)
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: reports.appendingPathComponent("run-\(report.runID)/report.json"))) as! [String: Any]
        let users = (json["findings"] as! [[String: Any]]).compactMap { $0["user_id"] as? String }
        #expect(users.contains(user))
        #expect(try connection.query("SELECT count(*) FROM reconcile.runs")[0].decode(Int.self, at: 0) == 1)
    }

    /// With a grace period longer than the nightly overlap, a purchase too young to judge in one
    /// run must still fall inside the next run's window.
    @Test func aPurchaseTooYoungForTheLastRunIsJudgedByTheNextWhateverTheGrace() async throws {
        let connection = try database.connect()
        // The previous run ended an hour ago; the purchase was 90 minutes old then, younger than
        // the 2 h grace, so it was left for the next run.
        let previous = try connection.query(
            """
            INSERT INTO reconcile.runs (status, window_since, window_until, environment, started_at, finished_at)
            VALUES ('completed', now() - interval '2 days', now() - interval '1 hour', 'production',
                    now() - interval '1 hour', now() - interval '1 hour') RETURNING id
            """)[0].decode(Int64.self, at: 0)
        try connection.execute(
            """
            INSERT INTO reconcile.apple_transactions (transaction_id, original_transaction_id, product_id, product_type,
                bundle_id, environment, purchase_date, source, first_seen_run, last_seen_run)
            VALUES ('tx-young', 'tx-young', 'coin42', 'consumable', 'com.hncs.szj', 'Production',
                    now() - interval '150 minutes', 'jws', $1, $1)
            """, [previous])
        let settings = try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj", "RECONCILE_REPORT_DIR": reports.path,
            "RECONCILE_GRACE": "2h",
        ].lookup)
        let report = try await ReconciliationJob(settings: settings, verifier: ScriptedVerifier(), logger: Logger(label: "test"))
            .run(.init())
        #expect(try report.findings.contains { $0.kind == .missedDelivery && $0.transactionID == "tx-young" })
    }

    @Test func aWorkerWithoutARunInProgressDoesNothing() async throws {
        #expect(try await job(ScriptedVerifier()).work() == 0)
    }

    @Test func refusesAnOutdatedSchema() async throws {
        let empty = try TestDatabase.create("job_empty")
        let settings = try Settings(lookup: ["DATABASE_URL": empty.url, "RECONCILE_BUNDLE_IDS": "x"].lookup)
        let job = ReconciliationJob(settings: settings, verifier: ScriptedVerifier(), logger: Logger(label: "test"))
        await #expect(throws: SchemaOutOfDateError.self) { try await job.run(.init()) }
    }
}

extension Dictionary where Key == String, Value == String {
    var lookup: (String) -> String? { { self[$0] } }
}
