import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// A small game world for the tests that run the real `reconcile` executable and kill, stop or
/// starve it: StoreKit 1 receipts and StoreKit 2 transactions signed by the simulator's CA (kept
/// on disk, so the child process trusts it through `APPLE_ROOT_CERTIFICATES`), a ledger with most
/// finding kinds planted (as in ScenarioTests), `filler` honest customers, and the queue an
/// earlier run left: an item a person resolved (with its outbox row) and an open item whose
/// condition is gone. The purchases are older than the window the runs are given while the
/// uploads fall inside it, so a run must reach them through what it verified, not by date.
///
/// One world is built per filler size and shared; each test plants it into its own database.
struct CrashWorld: Sendable {
    static let bundle = "com.hncs.szj"

    struct Upload: Sendable {
        var user: String
        var kind: String
        var payload: String
        var username: String?
        var claimed: String?
    }

    struct Delivery: Sendable {
        var transaction: String
        var user: String
        var product: String
        var quantity: Int
        var revoked: Bool
    }

    /// The simulator's state folder: its CA (`root.pem`) and Server API key.
    let state: URL
    /// Reports and child-process logs of every test using this world.
    let scratch: URL
    let created: Date
    let uploads: [Upload]
    let deliveries: [Delivery]

    /// The window start every run of this world is given (the purchases are older).
    var since: Date { created.addingTimeInterval(-36 * 3600) }
    /// Uploads that go to verifyReceipt.
    var receiptUploads: Int { uploads.filter { $0.kind == "app_receipt" }.count }

    static let quiet = Logger(label: "crash-world", factory: { _ in SwiftLogNoOpLogHandler() })

    static func make(filler: Int) throws -> CrashWorld {
        let scratch = Scratch.root
            .appendingPathComponent("crash-\(UUID().uuidString.prefix(8))")
        let state = scratch.appendingPathComponent("sim")
        let sim = try AppStoreSimulator(configuration: .init(stateDirectory: state, logger: quiet))
        let forger = try AppStoreSimulator(configuration: .init(logger: quiet))
        let created = Date()
        let old = created.addingTimeInterval(-2 * 86_400)
        var uploads: [Upload] = []
        var deliveries: [Delivery] = []

        func purchase(_ id: String, _ product: String = "coin42", original: String? = nil, quantity: Int = 1,
                      cancelled: Bool = false) -> SimulatedReceipt.Purchase {
            .init(productID: product, transactionID: id, originalTransactionID: original ?? id, purchaseDate: old,
                  quantity: quantity, cancellationDate: cancelled ? old : nil)
        }
        func receipt(_ purchases: [SimulatedReceipt.Purchase], bundle: String = Self.bundle,
                     environment: SimulatedReceipt.Environment = .production, by issuer: AppStoreSimulator? = nil)
            throws -> String
        {
            try (issuer ?? sim).issueReceipt(
                SimulatedReceipt(bundleID: bundle, environment: environment, purchases: purchases)).receiptData
        }
        func upload(_ user: String, _ payload: String, kind: String = "app_receipt", claimed: String? = nil,
                    username: String? = nil) {
            uploads.append(Upload(user: user, kind: kind, payload: payload, username: username, claimed: claimed))
        }
        func deliver(_ transaction: String, _ user: String, _ product: String = "coin42", quantity: Int = 1,
                     revoked: Bool = false) {
            deliveries.append(Delivery(transaction: transaction, user: user, product: product, quantity: quantity,
                                       revoked: revoked))
        }
        func sha(_ text: String) -> String {
            SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
        }

        // alice: a missed order, a wrong product, a wrong quantity.
        upload("alice", try receipt([purchase("1001"), purchase("1002"), purchase("1003", quantity: 2)]))
        deliver("1002", "alice", "coin4886"); deliver("1003", "alice")
        // carol: credited twice (a person already revoked one: see plant), and refunded but credited.
        upload("carol", try receipt([purchase("3001"), purchase("3002", cancelled: true)]))
        deliver("3001", "carol"); deliver("3001", "carol"); deliver("3002", "carol")
        // erin bought (applicationUsername = SHA-256 of her id); frank's session uploaded and got it.
        upload("erin", try receipt([purchase("5000")])); deliver("5000", "erin")
        upload("frank", try receipt([purchase("5001")]), claimed: "5001", username: sha("erin"))
        deliver("5001", "frank")
        // ivan was credited a transaction Apple never confirmed; judy's receipt is forged.
        upload("ivan", try receipt([purchase("8001")])); deliver("8001", "ivan"); deliver("9999", "ivan")
        upload("judy", try receipt([purchase("10001", "coin4886")], by: forger), claimed: "10001")
        deliver("10001", "judy", "coin4886")
        // kate: a tester's sandbox purchase credited in production. mia: another app's receipt.
        upload("kate", try receipt([purchase("11001")], environment: .sandbox)); deliver("11001", "kate")
        upload("mia", try receipt([purchase("13001")], bundle: "com.other.app"), claimed: "13001")
        // olga's receipt replayed by pete.
        let olgas = try receipt([purchase("15001")])
        upload("olga", olgas); upload("pete", olgas); deliver("15001", "olga")
        // Never flagged: a finished consumable, a restore, a refund never delivered, a revoked credit.
        upload("sam", try receipt([purchase("18001")])); upload("sam", try receipt([purchase("18002")]))
        deliver("18001", "sam"); deliver("18002", "sam")
        upload("tim", try receipt([purchase("19001", "unlock"), purchase("19002", "unlock", original: "19001")]))
        deliver("19001", "tim", "unlock")
        upload("vic", try receipt([purchase("20001", cancelled: true)]))
        upload("yara", try receipt([purchase("23001", cancelled: true)])); deliver("23001", "yara", revoked: true)
        // zed: delivered since an earlier run flagged it missed (see plant): auto-resolved.
        upload("zed", try receipt([purchase("30001")])); deliver("30001", "zed")
        // StoreKit 2: uma's purchase never credited; val's credited.
        for (user, delivered) in [("uma", false), ("val", true)] {
            let bought = try sim.createTransaction(SimulatedTransaction(
                productId: "coin42", customer: user, bundleId: Self.bundle, environment: .production,
                type: .consumable, quantity: 1, purchaseDate: old, price: 6000, currency: "CNY"))
            upload(user, bought.signedTransaction, kind: "signed_transaction", claimed: bought.transactionId)
            if delivered { deliver(bought.transactionId, user) }
        }
        for index in 0..<filler {
            let id = String(40_000 + index)
            upload("honest-\(index)", try receipt([purchase(id)])); deliver(id, "honest-\(index)")
        }
        return CrashWorld(state: state, scratch: scratch, created: created, uploads: uploads, deliveries: deliveries)
    }

    /// Writes the world into a migrated database: catalogue, uploads, ledger, and the queue as an
    /// earlier run and a support agent left it.
    func plant(on connection: Connection) throws {
        try connection.executeScript(
            """
            INSERT INTO reconcile.products VALUES
                ('coin42', 'consumable', 6000, 'CNY'), ('coin4886', 'consumable', 648000, 'CNY'),
                ('unlock', 'non_consumable', 30000, 'CNY');
            """)
        let uploadedAt = created.addingTimeInterval(-86_400)
        for upload in uploads {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads
                    (user_id, kind, payload, application_username, claimed_transaction_id, device, uploaded_at)
                VALUES ($1, $2, $3, $4, $5, '{"model": "iPhone15,2", "os": "17.5", "app": "4.2.0"}', $6)
                """, [upload.user, upload.kind, upload.payload, upload.username, upload.claimed, uploadedAt])
        }
        for delivery in deliveries {
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries
                    (transaction_id, user_id, product_id, quantity, delivered_at, revoked_at)
                VALUES ($1, $2, $3, $4, $5, $6)
                """,
                [delivery.transaction, delivery.user, delivery.product, delivery.quantity, uploadedAt,
                 delivery.revoked ? created.addingTimeInterval(-3600) : nil])
        }
        // An earlier nightly run flagged carol's double credit (a person since revoked one, which
        // put a row in the outbox) and zed's missed order (delivered since).
        try connection.execute(
            """
            WITH run AS (
                INSERT INTO reconcile.runs (status, window_since, window_until, environment, started_at, finished_at)
                VALUES ('completed', $1::timestamptz - interval '1 day', $1, 'production', $1, $1) RETURNING id
            ), items AS (
                INSERT INTO reconcile.review_items
                    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
                     suggested_action, first_seen_run, last_seen_run, resolution, resolved_by, resolved_at, note)
                SELECT 'duplicate_delivery:3001', 'duplicate_delivery', 'medium', 'resolved', '3001', '3001', 'carol',
                       'coin42', 'revoke', id, id, 'revoked', 'sue', $1, 'took one back' FROM run
                UNION ALL
                SELECT 'missed_delivery:30001', 'missed_delivery', 'high', 'open', '30001', '30001', 'zed', 'coin42',
                       'grant', id, id, NULL, NULL, NULL, NULL FROM run
                RETURNING id, fingerprint, status
            ), detected AS (
                INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
                SELECT items.id, run.id, 'reconcile', NULL, 'open', 'detected' FROM items, run
            ), decided AS (
                INSERT INTO reconcile.review_events (review_item_id, actor, from_status, to_status, note)
                SELECT id, 'sue', 'open', 'resolved', 'took one back' FROM items WHERE status = 'resolved'
                RETURNING id, review_item_id
            )
            INSERT INTO reconcile.action_outbox
                (review_item_id, review_event_id, action, transaction_id, product_id, quantity, from_user_id,
                 decided_by, note)
            SELECT review_item_id, id, 'revoke', '3001', 'coin42', 1, 'carol', 'sue', 'took one back' FROM decided
            """, [created.addingTimeInterval(-2 * 86_400)])
    }

    /// A simulator instance of its own (faults, counters) with the world's CA and key.
    func simulator() throws -> AppStoreSimulator {
        try AppStoreSimulator(configuration: .init(stateDirectory: state, logger: Self.quiet))
    }

    /// The environment of `reconcile run` against `database` and the simulator at `baseURL`.
    func environment(database: TestDatabase, simulator baseURL: String, extra: [String: String] = [:])
        -> [String: String]
    {
        [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": Self.bundle,
            "APPLE_VERIFY_RECEIPT_URL": baseURL + "/verifyReceipt",
            "APPLE_VERIFY_RECEIPT_SANDBOX_URL": baseURL + "/sandbox/verifyReceipt",
            "APPLE_ROOT_CERTIFICATES": state.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path,
            "RECONCILE_REPORT_DIR": scratch.appendingPathComponent("reports-\(database.name)").path,
            "RECONCILE_CONCURRENCY": "8", "RECONCILE_MAX_ATTEMPTS": "2",
        ].merging(extra) { $1 }
    }

    /// Starts `reconcile run` over the world's window.
    func reconcile(
        _ database: TestDatabase, simulator baseURL: String, failpoint: String? = nil, extra: [String: String] = [:],
        label: String
    ) throws -> ChildProcess {
        var environment = environment(database: database, simulator: baseURL, extra: extra)
        if let failpoint { environment["RECONCILE_FAILPOINT"] = failpoint }
        return try ChildProcess(
            try ChildProcess.executable("reconcile"),
            arguments: ["run", "--since", TimeExpression.format(since), "--log-level", "notice"],
            environment: environment, logDirectory: scratch.appendingPathComponent("logs-\(database.name)"),
            label: label)
    }

    /// Runs `reconcile run` to the end; returns the exit status and the process (for its output).
    func reconcileToEnd(
        _ database: TestDatabase, simulator baseURL: String, extra: [String: String] = [:], label: String
    ) async throws -> (status: Int32, process: ChildProcess) {
        let process = try reconcile(database, simulator: baseURL, extra: extra, label: label)
        return (try await process.waitForExit(), process)
    }
}

/// What a run leaves behind that must not depend on how it got there: the queue, its audit
/// trail, the outbox, every upload's verification, the white table and who carried what, and
/// the last run's outcome and report. Ids of runs and timestamps are left out; ids of uploads
/// and deliveries are the same in every database the world is planted in.
struct Outcome: Sendable, Equatable {
    var tables: [String: [String]]

    static let volatileTransactionKeys =
        "ARRAY['first_seen_run', 'last_seen_run', 'first_seen_at', 'last_seen_at', 'signed_date']"

    /// Reads the outcome; `attempts` false leaves out how many tries each upload took (a run
    /// starved by Apple spends more, by design); `lastRun` false leaves out the last run's
    /// counts, and `newFlags` false which of its report's findings were new (a run that follows
    /// a completed one reports only what it did itself).
    init(
        _ connection: Connection, reports: URL? = nil, attempts: Bool = true, lastRun: Bool = true,
        newFlags: Bool = true
    ) throws {
        func rows(_ sql: String) throws -> [String] {
            try connection.query(sql).map { try $0.decode(String.self, at: 0) }.sorted()
        }
        tables = [:]
        tables["review_items"] = try rows(
            """
            SELECT jsonb_build_array(fingerprint, kind, severity, status, transaction_id, original_transaction_id,
                                     user_id, product_id, upload_id, suggested_action, resolution, resolved_by, note,
                                     evidence - 'apple_transaction',
                                     CASE jsonb_typeof(evidence -> 'apple_transaction') WHEN 'object'
                                     THEN (evidence -> 'apple_transaction') - \(Self.volatileTransactionKeys) END)::text
              FROM reconcile.review_items
            """)
        tables["review_events"] = try rows(
            """
            SELECT jsonb_build_array(
                       i.fingerprint,
                       jsonb_agg(jsonb_build_array(e.actor, e.from_status, e.to_status, e.note) ORDER BY e.id))::text
              FROM reconcile.review_events e JOIN reconcile.review_items i ON i.id = e.review_item_id
             GROUP BY i.fingerprint
            """)
        tables["action_outbox"] = try rows(
            """
            SELECT jsonb_build_array(i.fingerprint, o.action, o.transaction_id, o.product_id, o.quantity,
                                     o.from_user_id, o.to_user_id, o.decided_by, o.note, o.consumed_at IS NULL)::text
              FROM reconcile.action_outbox o JOIN reconcile.review_items i ON i.id = o.review_item_id
            """)
        tables["upload_verifications"] = try rows(
            """
            SELECT jsonb_build_array(u.id, v.state, v.method, v.apple_status, v.error_code, v.environment, v.bundle_id,
                                     \(attempts ? "v.attempts" : "NULL"), v.last_error, v.claimed_by)::text
              FROM reconcile.receipt_uploads u LEFT JOIN reconcile.upload_verifications v ON v.upload_id = u.id
            """)
        tables["apple_transactions"] = try rows(
            """
            SELECT jsonb_build_array(transaction_id, original_transaction_id, product_id, product_type, bundle_id,
                                     environment, quantity, purchase_date, revocation_date, ownership_type,
                                     app_account_token, price_milli, currency, source)::text
              FROM reconcile.apple_transactions
            """)
        tables["transaction_claims"] = try rows(
            """
            SELECT jsonb_build_array(transaction_id, upload_id, user_id, application_username, app_account_token,
                                     source)::text
              FROM reconcile.transaction_claims
            """)
        let run = try connection.query(
            """
            SELECT id, jsonb_build_array(status, uploads_total, uploads_verified, uploads_invalid, uploads_retry,
                                         findings_total, findings_new, counts, dry_run, error)::text
              FROM reconcile.runs ORDER BY id DESC LIMIT 1
            """)
        if lastRun { tables["last_run"] = [try run[0].decode(String.self, at: 1)] }
        if let reports {
            let id = try run[0].decode(Int64.self, at: 0)
            let data = try Data(contentsOf: reports.appendingPathComponent("run-\(id)/report.json"))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let findings = try #require(json["findings"] as? [[String: Any]])
            tables["report_findings"] = findings.map {
                "\($0["kind"] ?? "") \($0["transaction_id"] ?? "-") \($0["user_id"] ?? "-")"
                    + (newFlags ? " new=\($0["new"] ?? "")" : "")
            }.sorted()
            func text(_ value: Any?) throws -> String {
                guard let value else { return "null" }
                return String(decoding: try JSONSerialization.data(
                    withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
            }
            tables["report_status"] = [try text(json["status"]), try text(json["counts"])]
            if lastRun { tables["report_verification"] = [try text(json["verification"])] }
        }
    }

    /// The rows that differ, table by table, for a readable failure.
    func differences(from expected: Outcome) -> String {
        var lines: [String] = []
        for table in Set(tables.keys).union(expected.tables.keys).sorted() {
            let mine = tables[table] ?? []
            let theirs = expected.tables[table] ?? []
            guard mine != theirs else { continue }
            let missing = theirs.filter { !mine.contains($0) }
            let extra = mine.filter { !theirs.contains($0) }
            lines.append("\(table): missing \(missing), unexpected \(extra)")
        }
        return lines.joined(separator: "\n")
    }
}

/// The outcome of one uninterrupted, healthy run of each world, computed once per test process.
actor ReferenceRuns {
    static let shared = ReferenceRuns()
    private var runs: [Int: Task<(CrashWorld, Outcome, TestDatabase), any Error>] = [:]

    /// The world with `filler` honest customers and the outcome of one healthy run over it.
    func world(filler: Int) async throws -> (world: CrashWorld, outcome: Outcome) {
        let (world, outcome, _) = try await reference(filler: filler)
        return (world, outcome)
    }

    /// The world, the outcome of its healthy run, and the database that run left.
    func reference(filler: Int) async throws -> (world: CrashWorld, outcome: Outcome, database: TestDatabase) {
        if let run = runs[filler] { return try await run.value }
        let run = Task {
            let world = try CrashWorld.make(filler: filler)
            let (database, connection) = try TestDatabase.migrated("crash_reference")
            try world.plant(on: connection)
            let (status, process) = try await world.simulator().withRunning { running in
                try await world.reconcileToEnd(database, simulator: running.baseURL, label: "reference")
            }
            guard status == 0 else { throw TestSetupError("the reference run failed: \(process.output)") }
            return (world, try Outcome(connection, reports: world.reports(database)), database)
        }
        runs[filler] = run
        return try await run.value
    }
}

extension CrashWorld {
    /// Where the runs against `database` write their reports.
    func reports(_ database: TestDatabase) -> URL {
        URL(fileURLWithPath: environment(database: database, simulator: "http://x")["RECONCILE_REPORT_DIR"]!)
    }
}

/// Waits until no session holds the run lock: a killed process's server session ends a moment
/// after the process (PostgreSQL notices the closed socket), and cron would not start the next
/// run in that moment either.
func waitForRunLockRelease(_ connection: Connection) async throws {
    for _ in 0..<500 {
        if try connection.query("SELECT pg_try_advisory_lock($1)", [Schema.LockKey.run])[0].decode(Bool.self, at: 0) {
            _ = try connection.query("SELECT pg_advisory_unlock($1)", [Schema.LockKey.run])
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw TestSetupError("the run lock was still held 10 s after the process died")
}

extension CrashSafetyTests {
    /// Whether an outcome comparison found nothing; a function so that a failure prints the
    /// differences once, in its comment.
    static func same(_ differences: String) -> Bool { differences.isEmpty }
}

extension AppleMisbehavingTests {
    /// Whether an outcome comparison found nothing; a function so that a failure prints the
    /// differences once, in its comment.
    static func same(_ differences: String) -> Bool { differences.isEmpty }
}
