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
    /// Verifications begun (before any delay or hold).
    private var begun = 0
    /// While held, every verification waits at its start.
    private var held = false
    let delay: Duration
    let productID: String

    init(failing: Set<String> = [], delay: Duration = .zero, productID: String = "coin42") {
        self.failing = failing
        self.delay = delay
        self.productID = productID
    }

    /// Uploads each payload a day ago as a signed transaction that claims it, by `user-0`,
    /// `user-1`, … in order.
    static func upload(_ payloads: [String], on connection: Connection) throws {
        for (index, payload) in payloads.enumerated() {
            try connection.plantSignedTransactionUpload(payload, claiming: payload, by: "user-\(index)", age: "1 day")
        }
    }

    func heal() { lock.withLock { failing = [] } }

    /// Holds every verification at its start until ``release()``.
    func hold() { lock.withLock { held = true } }

    func release() { lock.withLock { held = false } }

    /// Waits until a verification has begun: the job verifying it holds the run lock.
    func waitUntilVerifying() async throws {
        while lock.withLock({ begun == 0 }) { try await Task.sleep(for: .milliseconds(10)) }
    }

    func verify(_ upload: Upload, attempt: Int) async throws -> Verdict {
        lock.withLock { begun += 1 }
        while lock.withLock({ held }) { try await Task.sleep(for: .milliseconds(10)) }
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
            transactionID: upload.payload, originalTransactionID: upload.payload, productID: productID,
            productType: "consumable", bundleID: "com.hncs.szj", environment: .production,
            purchaseDate: Date().addingTimeInterval(-86_400), priceMilli: 6000, currency: "CNY",
            signedDate: Date(), source: "jws")
        return .verified(VerifiedUpload(method: "jws", appleStatus: nil, environment: .production,
                                        bundleID: "com.hncs.szj", transactions: [transaction]))
    }
}

@Suite("Reconciliation job", .serialized)
struct JobTests {
    let database: TestDatabase
    let reports: URL

    init() throws {
        database = try TestDatabase.create("job")
        reports = Scratch.root.appendingPathComponent("reports-\(UUID().uuidString)")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        // Six uploads of one transaction each; two delivered, four missed; one forged.
        try ScriptedVerifier.upload(["tx-1", "tx-2", "tx-3", "tx-4", "tx-5", "forged-6"], on: connection)
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
                                   "verification", "counts", "value_at_risk", "notifications", "consumption", "policies",
                                   "findings"])
        let counts = json["counts"] as! [String: Int]
        #expect(counts.count == 10 && counts["missed_delivery"] == 3 && counts["wrong_account"] == 0)
        let risk = json["value_at_risk"] as! [[String: Any]]
        #expect(risk.contains { $0["kind"] as? String == "missed_delivery" && $0["currency"] as? String == "CNY"
            && $0["amount_milli"] as? Int == 18_000 })
        let finding = (json["findings"] as! [[String: Any]]).first!
        #expect(Set(finding.keys) == ["review_item_id", "new", "kind", "store", "severity", "transaction_id",
                                      "original_transaction_id", "user_id", "product_id", "suggested_action", "evidence"])
        #expect(finding["store"] as? String == "app_store")
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
        let held = ScriptedVerifier()
        held.hold()
        let first = Task { try await job(held).run(.init(since: Date().addingTimeInterval(-7 * 86_400))) }
        // The first run is verifying (it holds the lock) and stays so until released.
        try await held.waitUntilVerifying()
        let error = await #expect(throws: RunLockedError.self) {
            try await job(ScriptedVerifier()).run(.init())
        }
        held.release()
        #expect(error?.description.contains("holds the lock") == true)
        #expect(try await first.value.status == "completed")
    }

    @Test func workersShareTheRunAndVerifyEachUploadOnce() async throws {
        let connection = try database.connect()
        for index in 100..<140 {
            try connection.plantSignedTransactionUpload(
                "tx-\(index)", claiming: "tx-\(index)", by: "user-\(index)", age: "1 day")
        }
        // The run is held at its first verifications, so the workers' share does not depend on
        // how fast the machine is: they verify what the run has not claimed.
        let runs = ScriptedVerifier()
        runs.hold()
        let coordinator = Task { try await job(runs).run(.init(since: Date().addingTimeInterval(-7 * 86_400))) }
        try await runs.waitUntilVerifying()
        let workers = ScriptedVerifier(delay: .milliseconds(5))
        let helped = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 { group.addTask { try await job(workers).work() } }
            return try await group.reduce(0, +)
        }
        runs.release()
        let report = try await coordinator.value
        let calls = runs.calls + workers.calls
        #expect(calls.count == 46, "every upload verified exactly once")
        #expect(Set(calls).count == 46)
        #expect(helped > 0, "the workers took part")
        #expect(try report.verification.uploads == 46 && report.findings.count == 44)
    }

    @Test func aCancelledRunIsRecordedAsInterruptedAndTheNextOneResumes() async throws {
        let held = ScriptedVerifier()
        held.hold()
        let run = Task { try await job(held).run(.init(since: Date().addingTimeInterval(-7 * 86_400))) }
        try await held.waitUntilVerifying()
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
        let queue = VerificationQueue(uploads: Differ.Relations.standard.uploads, maxAttempts: 5)
        let next = try await job(ScriptedVerifier()).run(.init())
        #expect(try queue.othersAreWorking(runID: next.runID, on: connection) == false)
        #expect(try next.status == "completed" && next.findings.count == 4)
    }

    /// Text clients and the ledger supply, as hostile as the schema lets it be: quotes, SQL,
    /// backslashes, LIKE wildcards, format specifiers, every NUL-free control character,
    /// spreadsheet formulas, decomposed Unicode (equal to its composed form for Swift's `==`,
    /// not byte for byte) and 10,000 characters. (Indexed columns cannot hold more than about
    /// 2.7 kB that does not compress: the app's own insert would fail first.)
    static let hostileValues: [String] = [
        "o'brien\\\"; DROP TABLE reconcile.runs; --",
        "100%_off\t\u{7}\u{1b}[31m",
        "用户-🎉-" + String(repeating: "x", count: 10_000),
        #"back\slash \\ \' \" \u0000 \N $1 %s %% _ __ ; ;; /* */ {"json": [1]} E'\x41'"#,
        String((1...31).map { Character(Unicode.Scalar($0)!) }) + "\u{7f}\u{80}\u{9f}\u{2028}\u{2029}\u{feff}\u{202e}",
        "=HYPERLINK(\"http://evil.example\",\"x\")",
        "Zoe\u{301} e\u{301}\u{301} \u{1F469}\u{200D}\u{1F467}",
        "  padded  ",
    ]

    @Test(arguments: hostileValues)
    func hostileValuesGoThroughUntouched(_ value: String) async throws {
        let connection = try database.connect()
        // One missed delivery and one product mismatch, every text field set to the value.
        let user = value, missed = "tx-a-" + value, mismatched = "tx-b-" + value
        let appleProduct = "p-" + value, ledgerProduct = "ledger-" + value
        let device = try PostgresJSON(encoding: ["model": value, "os": "17.5"])
        for transaction in [missed, mismatched] {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads
                    (user_id, kind, payload, application_username, claimed_transaction_id, device, uploaded_at)
                VALUES ($1, 'signed_transaction', $2, $1, $2, $3, now() - interval '1 day')
                """, [user, transaction, device])
        }
        try connection.plantDelivery(mismatched, to: user, product: ledgerProduct, age: "1 day")
        let report = try await job(ScriptedVerifier(productID: appleProduct))
            .run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(try connection.query("SELECT count(*) FROM reconcile.runs")[0].decode(Int.self, at: 0) == 1)

        func same(_ text: Any?, _ expected: String, _ what: String) {
            #expect((text as? String).map { Array($0.utf8) } == Array(expected.utf8), "\(what)")
        }
        /// The evidence of a finding, wherever it was read from, names every value byte for byte.
        func checkEvidence(_ evidence: [String: Any], transaction: String, _ place: String) {
            let apple = evidence["apple_transaction"] as? [String: Any]
            same(apple?["transaction_id"], transaction, "\(place): apple transaction id")
            same(apple?["product_id"], appleProduct, "\(place): apple product id")
            let upload = (evidence["uploads"] as? [[String: Any]])?.first
            same(upload?["user_id"], user, "\(place): upload user")
            same(upload?["application_username"], user, "\(place): application username")
            same(upload?["claimed_transaction_id"], transaction, "\(place): claimed transaction")
            same((upload?["device"] as? [String: Any])?["model"], value, "\(place): device model")
            if transaction == mismatched {
                let delivery = (evidence["deliveries"] as? [[String: Any]])?.first
                same(delivery?["transaction_id"], transaction, "\(place): delivery transaction")
                same(delivery?["user_id"], user, "\(place): delivery user")
                same(delivery?["product_id"], ledgerProduct, "\(place): ledger product id")
            }
        }
        func object(_ text: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        }

        let expected = [("missed_delivery", missed), ("product_mismatch", mismatched)]
        for (kind, transaction) in expected {
            // The review queue.
            let rows = try connection.query(
                """
                SELECT user_id, transaction_id, product_id, evidence::text FROM reconcile.review_items
                 WHERE kind = $1 AND transaction_id = $2
                """, [kind, transaction])
            let row = try #require(rows.first, "\(kind) in the queue")
            same(try row.decode(String?.self, at: 0), user, "queue: user")
            same(try row.decode(String?.self, at: 1), transaction, "queue: transaction")
            same(try row.decode(String?.self, at: 2), appleProduct, "queue: product")
            checkEvidence(object(try row.decode(String.self, at: 3)), transaction: transaction, "queue \(kind)")
        }

        // report.json.
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: reports.appendingPathComponent("run-\(report.runID)/report.json"))) as! [String: Any]
        let findings = try #require(json["findings"] as? [[String: Any]])
        for (kind, transaction) in expected {
            let finding = try #require(findings.first {
                $0["kind"] as? String == kind && ($0["transaction_id"] as? String).map { Array($0.utf8) } == Array(transaction.utf8)
            }, "\(kind) in report.json")
            same(finding["user_id"], user, "report.json: user")
            same(finding["original_transaction_id"], transaction, "report.json: original transaction")
            same(finding["product_id"], appleProduct, "report.json: product")
            checkEvidence(finding["evidence"] as? [String: Any] ?? [:], transaction: transaction, "report.json \(kind)")
        }

        // review.csv: the values come back as written, but for the quote that defuses a formula.
        let csv = try String(contentsOf: reports.appendingPathComponent("run-\(report.runID)/review.csv"), encoding: .utf8)
        let records = Self.parseCSV(csv)
        let header = try #require(records.first)
        let columns = Dictionary(uniqueKeysWithValues: header.enumerated().map { ($1, $0) })
        let defused = { (text: String) in
            "=+-@\t\r\n \u{FF1D}\u{FF0B}\u{FF0D}\u{FF20}".unicodeScalars.contains(text.unicodeScalars.first!)
                ? "'" + text : text
        }
        for (kind, transaction) in expected {
            let record = try #require(records.dropFirst().first {
                $0[columns["kind"]!] == kind && Array($0[columns["transaction_id"]!].utf8) == Array(transaction.utf8)
            }, "\(kind) in review.csv")
            same(record[columns["user_id"]!], defused(user), "review.csv: user")
            same(record[columns["original_transaction_id"]!], transaction, "review.csv: original transaction")
            same(record[columns["product_id"]!], appleProduct, "review.csv: product")
        }
    }

    /// RFC 4180: fields split on commas, records on CRLF; quoted fields may hold both, and `""`.
    static func parseCSV(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = String.UnicodeScalarView()
        var quoted = false
        var scalars = Array(text.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            if quoted {
                if scalar == "\"" {
                    if scalars.first == "\"" { field.append(scalars.removeFirst()) } else { quoted = false }
                } else {
                    field.append(scalar)
                }
            } else if scalar == "\"" {
                quoted = true
            } else if scalar == "," {
                record.append(String(field))
                field = String.UnicodeScalarView()
            } else if scalar == "\r", scalars.first == "\n" {
                scalars.removeFirst()
                record.append(String(field))
                records.append(record)
                record = []
                field = String.UnicodeScalarView()
            } else {
                field.append(scalar)
            }
        }
        return records
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

    /// SPEC section 5: a nightly run judges every delivery that entered or changed in the ledger
    /// since the previous run, whatever its delivered_at.
    @Test func aNightlyRunJudgesLedgerChangesBackdatedBeforeItsWindow() async throws {
        let verifier = ScriptedVerifier()
        let connection = try database.connect()
        func changesLeft() throws -> Int {
            try connection.query("SELECT count(*) FROM reconcile.ledger_changes")[0].decode(Int.self, at: 0)
        }
        func findings(_ report: RunReport) throws -> Set<String> {
            Set(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" })
        }
        let first = try await job(verifier).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(try findings(first).count == 4)
        #expect(try changesLeft() == 0, "a finished run prunes the changes it judged")

        // A grant made by hand, backdated three days: far before the next window (the watermark
        // less an hour). Apple never issued the transaction.
        try connection.plantDelivery("tx-ghost", to: "user-9", product: "coin42", age: "3 days")
        // A dry run does not finish: it keeps the change for the next run.
        let dry = try await job(verifier).run(.init(dryRun: true))
        #expect(try findings(dry).contains("unverified_delivery tx-ghost"))
        #expect(try changesLeft() == 1)
        let second = try await job(verifier).run(.init())
        #expect(second.since.map { $0 > Date().addingTimeInterval(-2 * 3600) } == true, "a nightly window, no --since")
        #expect(try second.findings.filter(\.isNew).map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }
            == ["unverified_delivery tx-ghost"])
        #expect(try changesLeft() == 0)

        // An old, clean delivery changes product: judged again although delivered a day ago.
        try connection.execute("UPDATE reconcile.deliveries SET product_id = 'coin99' WHERE transaction_id = 'tx-1'")
        let third = try await job(verifier).run(.init())
        #expect(try third.findings.filter(\.isNew).map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }
            == ["product_mismatch tx-1"])
        #expect(try changesLeft() == 0)

        // Deleting the grant: judged again, so its item auto-resolves.
        try connection.execute("DELETE FROM reconcile.deliveries WHERE transaction_id = 'tx-ghost'")
        let fourth = try await job(verifier).run(.init())
        #expect(try !findings(fourth).contains("unverified_delivery tx-ghost"))
        #expect(fourth.changes.autoResolved == 1)

        // Nothing new: nothing left to judge, nothing new found.
        let fifth = try await job(verifier).run(.init())
        #expect(try changesLeft() == 0)
        #expect(try fifth.newFindings == 0 && findings(fifth) == findings(fourth))
        #expect(verifier.calls.count == 6)
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
