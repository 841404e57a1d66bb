import AppStore
import AppStoreSimulator
import Foundation
import Postgres
import Reconciliation
import TestSupport
import Testing

/// SPEC section 3 at the level of a whole `reconcile run` (the real executable): Apple hangs,
/// fails every request, answers garbage, rate-limits the Server API or disappears mid-run. The
/// run ends `completed_with_unresolved` after a bounded number of paced requests, judges nothing
/// that waits on an unfinished verification, and the next healthy run ends where a run against a
/// healthy Apple would have. (One client call's faults are tested in AppStoreTests; a 21005 run
/// in ScenarioTests.)
@Suite("Apple misbehaving: whole runs against a failing App Store")
struct AppleMisbehavingTests {
    enum Storm: String, CaseIterable, Sendable {
        case http503 = "HTTP 503 on every request"
        case malformed = "truncated JSON on every request"
        case hang = "every request hangs past the timeout"
        /// A 200 head announcing 4,096 bytes and one byte, then nothing (a stalled Apple, or a
        /// connection a NAT dropped after the head): the deadline covers the body too.
        case stalledBody = "every answer stalls after its head and one byte"

        var faults: SimulatorFaults {
            var faults = SimulatorFaults.none
            switch self {
            case .http503: faults.http503Share = 1
            case .malformed: faults.malformedShare = 1
            case .hang:
                faults.hangShare = 1
                faults.hangMilliseconds = 10_000
            case .stalledBody:
                faults.stalledBodyShare = 1
                faults.hangMilliseconds = 300_000
            }
            return faults
        }

        /// The stormy run's settings: a deadline shorter than a hang for the hang (the default
        /// 30 s elsewhere, so that a loaded test machine never turns a slow answer into a failure).
        var settings: [String: String] {
            guard self == .hang || self == .stalledBody else { return AppleMisbehavingTests.impatient }
            return AppleMisbehavingTests.impatient.merging(["RECONCILE_APPLE_TIMEOUT": "2s"]) { $1 }
        }
    }

    /// Settings of every run here: two tries per request.
    static let impatient = ["RECONCILE_MAX_ATTEMPTS": "2"]

    @Test(arguments: Storm.allCases)
    func aStormLeavesUploadsToRetryAndTheNextHealthyRunCatchesUp(_ storm: Storm) async throws {
        let (world, _, referenceDatabase) = try await ReferenceRuns.shared.reference(filler: 0)
        let (database, connection) = try TestDatabase.migrated("apple_storm")
        try world.plant(on: connection)

        let sim = try world.simulator()
        try await sim.withRunning { running in
            sim.state.faults = storm.faults
            let (status, stormy) = try await world.reconcileToEnd(
                database, simulator: running.baseURL, extra: storm.settings, label: "storm")
            #expect(status == 0, "\(stormy.output)")
            // Bounded: RECONCILE_MAX_ATTEMPTS requests per receipt, then it waits for the next run.
            // (A request that times out on a loaded machine before it reaches the simulator is
            // not counted there.)
            let requests = sim.state.stats.verifyReceiptRequests
            if storm == .hang || storm == .stalledBody {
                #expect(requests > 0 && requests <= world.receiptUploads * 2)
            } else {
                #expect(requests == world.receiptUploads * 2)
            }
            try Self.expectOnlyVerifiedWorkJudged(world, connection, reports: world.reports(database))

            sim.state.faults = .none
            let (again, healthy) = try await world.reconcileToEnd(
                database, simulator: running.baseURL, extra: Self.impatient, label: "healthy")
            #expect(again == 0, "\(healthy.output)")
        }
        #expect(try Self.lastRunStatus(connection) == "completed")
        let expected = try Outcome(
            referenceDatabase.connect(), reports: world.reports(referenceDatabase), attempts: false, lastRun: false,
            newFlags: false)
        let outcome = try Outcome(
            connection, reports: world.reports(database), attempts: false, lastRun: false, newFlags: false)
        let differences = outcome.differences(from: expected)
        #expect(Self.same(differences), "\(storm.rawValue), then a healthy run:\n\(differences)")
    }

    /// Apple down for good (HTTP 503 to everything) over a window larger than a batch: the run
    /// does not spend RECONCILE_MAX_ATTEMPTS timeouts on every upload of the window; after a batch
    /// that Apple did not answer it stops verifying and fails with a clear message (exit 1). The
    /// next healthy run does everything, ending as an uninterrupted healthy run.
    @Test func anAppleOutageStopsTheRunAfterABatchAndTheNextRunCompletes() async throws {
        let (world, _, referenceDatabase) = try await ReferenceRuns.shared.reference(filler: CrashSafetyTests.filler)
        let (database, connection) = try TestDatabase.migrated("apple_outage")
        try world.plant(on: connection)

        let sim = try world.simulator()
        try await sim.withRunning { running in
            sim.state.faults = Storm.http503.faults
            let (status, down) = try await world.reconcileToEnd(
                database, simulator: running.baseURL, extra: Self.impatient, label: "outage")
            #expect(status == 1, "\(down.output)")
            let message = down.standardError.split(separator: "\n").last { $0.hasPrefix("reconcile: ") } ?? ""
            #expect(message.hasPrefix("reconcile: Apple's verifyReceipt did not answer"), "\(down.output)")
            #expect(message.contains("HTTP 503"), "\(down.output)")
            // The run stops at the 20th unanswered upload in a row (the threshold at the world's
            // concurrency of 8), whatever the machine's load: those 20 and at most the 7 still out,
            // two tries each, against the 2 × \(world.receiptUploads) of a run that went on.
            let requests = sim.state.stats.verifyReceiptRequests
            #expect(requests <= (20 + 7) * 2, "the run went on after Apple stopped answering: \(requests) requests")
            #expect(world.receiptUploads > 20 + 7, "the world is too small to tell a stop from the end")
            let recorded = try connection.query(
                "SELECT status, coalesce(error, '') FROM reconcile.runs ORDER BY id DESC LIMIT 1")
            #expect(try recorded[0].decode(String.self, at: 0) == "failed")
            #expect(try recorded[0].decode(String.self, at: 1).hasPrefix("Apple's verifyReceipt did not answer"))
            #expect(try connection.query("SELECT count(*) FROM reconcile.review_items")[0].decode(Int.self, at: 0) == 2,
                    "nothing judged: only the two items an earlier run left")

            sim.state.faults = .none
            let (again, healthy) = try await world.reconcileToEnd(
                database, simulator: running.baseURL, extra: Self.impatient, label: "healthy")
            #expect(again == 0, "\(healthy.output)")
        }
        let expected = try Outcome(
            referenceDatabase.connect(), reports: world.reports(referenceDatabase), attempts: false)
        let differences = try Outcome(connection, reports: world.reports(database), attempts: false)
            .differences(from: expected)
        #expect(Self.same(differences), "Apple down, then healthy:\n\(differences)")
    }

    /// The simulator process is killed with SIGKILL while the run verifies (connections reset,
    /// then refused): the run finishes without it, and once it is back the next run completes.
    @Test func theSimulatorKilledMidRun() async throws {
        let (world, _, referenceDatabase) = try await ReferenceRuns.shared.reference(filler: 0)
        let (database, connection) = try TestDatabase.migrated("apple_gone")
        try world.plant(on: connection)
        let logs = world.scratch.appendingPathComponent("logs-\(database.name)")

        func startSimulator(_ label: String) async throws -> (ChildProcess, String) {
            let portFile = logs.appendingPathComponent("\(label).port")
            let process = try ChildProcess(
                try ChildProcess.executable("appstore-sim"),
                arguments: ["serve", "--state-dir", world.state.path, "--port", "0", "--port-file", portFile.path,
                            "--latency-ms", "50"],
                environment: [:], logDirectory: logs, label: label)
            for _ in 0..<1500 {
                if let port = try? String(contentsOf: portFile, encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines), !port.isEmpty
                {
                    return (process, "http://127.0.0.1:\(port)")
                }
                guard process.process.isRunning else { throw TestSetupError("appstore-sim: \(process.output)") }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw TestSetupError("appstore-sim did not listen: \(process.output)")
        }

        let (first, firstURL) = try await startSimulator("sim-first")
        // A refused connection is retried by the HTTP client until its connect deadline
        // (RECONCILE_APPLE_TIMEOUT, at most 10 s): 3 s keeps the test short.
        let run = try world.reconcile(
            database, simulator: firstURL, failpoint: "verify.verdict@3",
            extra: Self.impatient.merging(["RECONCILE_APPLE_TIMEOUT": "3s"]) { $1 }, label: "orphaned")
        try await run.waitUntilStopped()
        try await first.killNow()
        run.send(SIGCONT)
        let status = try await run.waitForExit(timeout: .seconds(120))
        #expect(status == 0, "\(run.output)")
        let retrying = try connection.query(
            "SELECT count(*) FROM reconcile.upload_verifications WHERE state = 'retry'")[0].decode(Int.self, at: 0)
        #expect(retrying > 0, "some uploads were still to verify when the simulator died")
        #expect(try Self.lastRunStatus(connection) == "completed_with_unresolved")
        try Self.expectNothingJudgedOnRetryingUploads(connection)

        let (second, secondURL) = try await startSimulator("sim-second")
        defer { second.send(SIGKILL) }
        let (again, healthy) = try await world.reconcileToEnd(
            database, simulator: secondURL, extra: Self.impatient, label: "healthy")
        #expect(again == 0, "\(healthy.output)")
        #expect(try Self.lastRunStatus(connection) == "completed")
        let expected = try Outcome(
            referenceDatabase.connect(), reports: world.reports(referenceDatabase), attempts: false, lastRun: false,
            newFlags: false)
        let differences = try Outcome(
            connection, reports: world.reports(database), attempts: false, lastRun: false, newFlags: false
        ).differences(from: expected)
        #expect(Self.same(differences), "simulator killed mid-run, then a healthy run:\n\(differences)")
    }

    /// The App Store Server API answers 429 with a `Retry-After` to every request: the run waits
    /// each one out before trying again (paced), gives up after RECONCILE_MAX_ATTEMPTS tries per
    /// call (bounded), judges nothing it could not learn, and the next healthy run asks again:
    /// the customers' histories (a purchase never uploaded, a refund) and the unknown ledger
    /// transaction end as in a run against a healthy API.
    @Test func aRateLimitedServerAPIIsWaitedOutAndAskedAgainByTheNextRun() async throws {
        let state = Scratch.root
            .appendingPathComponent("apple-429-\(UUID().uuidString.prefix(8))")
        let sim = try AppStoreSimulator(configuration: .init(stateDirectory: state, logger: CrashWorld.quiet))
        let dayAgo = Date().addingTimeInterval(-86_400)
        let uploadedAt = Date().addingTimeInterval(-20 * 3600)
        func buy(_ customer: String) throws -> CreatedTransaction {
            try sim.createTransaction(SimulatedTransaction(
                productId: "coin42", customer: customer, bundleId: CrashWorld.bundle, environment: .production,
                type: .consumable, quantity: 1, purchaseDate: dayAgo, price: 6000, currency: "CNY"))
        }
        let uploaded = try buy("amy")
        let neverUploaded = try buy("amy")
        let refunded = try buy("amy")
        let bobs = try buy("bob")
        _ = try sim.refundTransaction(refunded.transactionId)

        func plant(_ database: TestDatabase) throws {
            let connection = try database.connect()
            _ = try Schema.migrate(connection)
            for (user, transaction) in [("amy", uploaded), ("amy", refunded), ("bob", bobs)] {
                try connection.execute(
                    """
                    INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                    VALUES ($1, 'signed_transaction', $2, $3, $4)
                    """, [user, transaction.signedTransaction, transaction.transactionId, uploadedAt])
                try connection.execute(
                    """
                    INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, delivered_at)
                    VALUES ($1, $2, 'coin42', $3)
                    """, [transaction.transactionId, user, uploadedAt])
            }
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, delivered_at)
                VALUES ('999000111', 'bob', 'coin4886', $1)
                """, [uploadedAt.addingTimeInterval(3600)])
        }
        func reconcile(_ database: TestDatabase, _ running: RunningSimulator, label: String) async throws
            -> (Int32, ChildProcess)
        {
            let process = try ChildProcess(
                try ChildProcess.executable("reconcile"), arguments: ["run", "--since", "3d", "--log-level", "notice"],
                environment: Self.impatient.merging(running.jobEnvironment) { $1 }.merging([
                    "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": CrashWorld.bundle,
                    "APPSTORE_API_RATE": "1000", "RECONCILE_CONCURRENCY": "1",
                    "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports-\(database.name)").path,
                ]) { $1 },
                logDirectory: state.appendingPathComponent("logs-\(database.name)"), label: label)
            return (try await process.waitForExit(), process)
        }
        func findings(_ database: TestDatabase) throws -> [String] {
            try Outcome(database.connect(), reports: state.appendingPathComponent("reports-\(database.name)"),
                        lastRun: false, newFlags: false).tables["report_findings"] ?? []
        }

        let reference = try TestDatabase.create("apple_429_reference")
        let database = try TestDatabase.create("apple_429")
        try plant(reference)
        try plant(database)
        try await sim.withRunning { running in
            let (healthy, healthyRun) = try await reconcile(reference, running, label: "reference")
            #expect(healthy == 0, "\(healthyRun.output)")
            #expect(try findings(reference) == [
                "missed_delivery \(neverUploaded.transactionId) amy", "refunded_delivery \(refunded.transactionId) amy",
                "unverified_delivery 999000111 bob",
            ])

            var limited = SimulatorFaults.none
            limited.http429Share = 1
            limited.retryAfterMilliseconds = 300
            sim.state.faults = limited
            sim.state.resetStats()
            let (status, limitedRun) = try await reconcile(database, running, label: "limited")
            #expect(status == 0, "\(limitedRun.output)")
            #expect(try Self.lastRunStatus(database.connect()) == "completed_with_unresolved")
            #expect(try findings(database) == [], "nothing may be judged on answers Apple did not give")
            // Two histories (amy, bob) and one Get Transaction Info, two tries each, one at a time.
            let arrivals = sim.state.serverAPIArrivals
            #expect(arrivals.count == 6)
            for call in stride(from: 0, to: arrivals.count - 1, by: 2) {
                #expect(arrivals[call + 1] - arrivals[call] >= .milliseconds(250), "Retry-After not waited out")
            }

            sim.state.faults = .none
            let (again, nextRun) = try await reconcile(database, running, label: "next")
            #expect(again == 0, "\(nextRun.output)")
            #expect(try Self.lastRunStatus(database.connect()) == "completed")
        }
        let expected = try Outcome(
            reference.connect(), reports: state.appendingPathComponent("reports-\(reference.name)"), attempts: false,
            lastRun: false, newFlags: false)
        let differences = try Outcome(
            database.connect(), reports: state.appendingPathComponent("reports-\(database.name)"), attempts: false,
            lastRun: false, newFlags: false
        ).differences(from: expected)
        #expect(Self.same(differences), "Server API rate-limited, then healthy:\n\(differences)")
    }

    // MARK: Checks

    static func lastRunStatus(_ connection: Connection) throws -> String {
        try connection.query("SELECT status FROM reconcile.runs ORDER BY id DESC LIMIT 1")[0].decode(String.self, at: 0)
    }

    /// After a run in which no receipt could be verified: it completed with unresolved work, every
    /// receipt upload waits in `retry`, and the only findings are the StoreKit 2 ones (verified
    /// locally, no Apple request needed).
    static func expectOnlyVerifiedWorkJudged(_ world: CrashWorld, _ connection: Connection, reports: URL) throws {
        #expect(try lastRunStatus(connection) == "completed_with_unresolved")
        let states = try connection.query(
            """
            SELECT u.kind, v.state, count(*) FROM reconcile.receipt_uploads u
              JOIN reconcile.upload_verifications v ON v.upload_id = u.id GROUP BY 1, 2 ORDER BY 1, 2
            """).map { row in
                [try row.decode(String.self, at: 0), try row.decode(String.self, at: 1),
                 String(try row.decode(Int.self, at: 2))].joined(separator: " ")
            }
        #expect(states == ["app_receipt retry \(world.receiptUploads)", "signed_transaction verified 2"])
        let uma = try #require(world.uploads.first { $0.user == "uma" }?.claimed)
        let findings = try Outcome(connection, reports: reports, lastRun: false, newFlags: false)
            .tables["report_findings"]
        #expect(findings == ["missed_delivery \(uma) uma"])
        try expectNothingJudgedOnRetryingUploads(connection)
    }

    /// No open review item seen by the last run is about a transaction an upload still being
    /// retried says it reports, nor says Apple does not know a delivery of an account with an
    /// upload still being retried (SPEC sections 3 and 5).
    static func expectNothingJudgedOnRetryingUploads(_ connection: Connection) throws {
        let premature = try connection.query(
            """
            WITH waiting AS (
                SELECT u.user_id, u.claimed_transaction_id FROM reconcile.receipt_uploads u
                  JOIN reconcile.upload_verifications v ON v.upload_id = u.id WHERE v.state IN ('pending', 'retry')
            )
            SELECT r.fingerprint FROM reconcile.review_items r
             WHERE r.status IN ('open', 'in_review')
               AND r.last_seen_run = (SELECT max(id) FROM reconcile.runs)
               AND (r.transaction_id IN (SELECT claimed_transaction_id FROM waiting)
                    OR (r.kind = 'unverified_delivery' AND r.user_id IN (SELECT user_id FROM waiting)))
            """).map { try $0.decode(String.self, at: 0) }
        #expect(premature.isEmpty, "judged while their evidence is still being verified: \(premature)")
    }
}
