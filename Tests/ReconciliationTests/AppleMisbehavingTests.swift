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

        var faults: SimulatorFaults {
            var faults = SimulatorFaults.none
            switch self {
            case .http503: faults.http503Share = 1
            case .malformed: faults.malformedShare = 1
            case .hang:
                faults.hangShare = 1
                faults.hangMilliseconds = 4000
            }
            return faults
        }
    }

    /// Settings of every run here: two tries per request, a one-second deadline.
    static let impatient = ["RECONCILE_MAX_ATTEMPTS": "2", "RECONCILE_APPLE_TIMEOUT": "1s"]

    @Test(arguments: Storm.allCases)
    func aStormLeavesUploadsToRetryAndTheNextHealthyRunCatchesUp(_ storm: Storm) async throws {
        let (world, _, referenceDatabase) = try await ReferenceRuns.shared.reference(filler: 0)
        let database = try TestDatabase.create("apple_storm")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        try world.plant(on: connection)

        let sim = try world.simulator()
        try await sim.withRunning { running in
            sim.state.faults = storm.faults
            let (status, stormy) = try await world.reconcileToEnd(
                database, simulator: running.baseURL, extra: Self.impatient, label: "storm")
            #expect(status == 0, "\(stormy.output)")
            // Bounded: RECONCILE_MAX_ATTEMPTS requests per receipt, then it waits for the next run.
            #expect(sim.state.stats.verifyReceiptRequests == world.receiptUploads * 2)
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

    /// The simulator process is killed with SIGKILL while the run verifies (connections reset,
    /// then refused): the run finishes without it, and once it is back the next run completes.
    @Test func theSimulatorKilledMidRun() async throws {
        let (world, _, referenceDatabase) = try await ReferenceRuns.shared.reference(filler: 0)
        let database = try TestDatabase.create("apple_gone")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
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
        let run = try world.reconcile(
            database, simulator: firstURL, failpoint: "verify.verdict@3", extra: Self.impatient, label: "orphaned")
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
            """).map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1)) \(try $0.decode(Int.self, at: 2))" }
        #expect(states == ["app_receipt retry \(world.receiptUploads)", "signed_transaction verified 2"])
        let uma = try #require(world.uploads.first { $0.user == "uma" }?.claimed)
        let findings = try Outcome(connection, reports: reports, lastRun: false, newFlags: false).tables["report_findings"]
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
