import AppStore
import AppStoreSimulator
import Foundation
import Postgres
import Reconciliation
import TestSupport
import Testing

/// The Apple-outage stop covers every phase that asks Apple: the Server API lookups and
/// `reconcile run --worker` stop after a streak of unanswered calls instead of spending every
/// attempt and its timeout on each of them, and the next healthy run does the rest.
@Suite("Apple outages stop every phase")
struct OutageTests {
    @Test func aServerAPIOutageStopsTheRunAndTheNextRunJudgesEverything() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("api_outage")
        let deliveries = 30
        for index in 0..<deliveries {
            try connection.plantDelivery(String(990_000_000 + index), to: "bob", product: "coin4886", age: "19 hours")
        }
        try await sim.withRunning { running in
            var settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            settings.maxAttempts = 2
            sim.state.faults = SimulatorFaults(http503Share: 1)
            await #expect(throws: ServerAPIUnreachableError.self) {
                _ = try await ServerAPIScenarioTests.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            }
            let asked = try connection.query("SELECT count(*) FROM reconcile.transaction_lookups")[0].decode(Int.self, at: 0)
            #expect(asked < deliveries, "the run went on asking after Apple stopped answering")
            let run = try connection.query("SELECT status, coalesce(error, '') FROM reconcile.runs ORDER BY id DESC LIMIT 1")
            #expect(try run[0].decode(String.self, at: 0) == "failed")
            #expect(try run[0].decode(String.self, at: 1).hasPrefix("Apple's App Store Server API did not answer"))

            sim.state.faults = .none
            let healthy = try await ServerAPIScenarioTests.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            #expect(healthy.status == "completed")
            #expect(try healthy.findings.filter { $0.kind == .unverifiedDelivery }.count == deliveries)
        }
    }

    /// A worker joins a run (stopped at a failpoint, so it stays in progress) while Apple answers
    /// nothing: the worker stops with the outage message and exit 1 instead of working through
    /// the window.
    @Test func aWorkerStopsOnAnAppleOutage() async throws {
        let (world, _, _) = try await ReferenceRuns.shared.reference(filler: CrashSafetyTests.filler)
        let (database, connection) = try TestDatabase.migrated("worker_outage")
        try world.plant(on: connection)
        let sim = try world.simulator()
        try await sim.withRunning { running in
            let run = try world.reconcile(
                database, simulator: running.baseURL, failpoint: "verify.verdict@1",
                extra: AppleMisbehavingTests.impatient.merging(["RECONCILE_CONCURRENCY": "1"]) { $1 }, label: "stalled")
            try await run.waitUntilStopped()
            // The stopped run's claims expire, as a dead process's do: the window is the worker's.
            try connection.execute("UPDATE reconcile.upload_verifications SET claimed_by = NULL, claimed_at = NULL")
            sim.state.faults = AppleMisbehavingTests.Storm.http503.faults
            let environment = world.environment(
                database: database, simulator: running.baseURL,
                extra: AppleMisbehavingTests.impatient.merging(["RECONCILE_CONCURRENCY": "1"]) { $1 })
            let worker = try ChildProcess(
                try ChildProcess.executable("reconcile"), arguments: ["run", "--worker", "--log-level", "notice"],
                environment: environment, logDirectory: world.scratch.appendingPathComponent("logs-\(database.name)"),
                label: "worker")
            let status = try await worker.waitForExit()
            try await run.killNow()
            #expect(status == 1, "\(worker.output)")
            #expect(worker.standardError.contains("Apple's verifyReceipt did not answer"), "\(worker.output)")
            let left = try connection.query(
                "SELECT count(*) FROM reconcile.upload_verifications WHERE state = 'pending'")[0].decode(Int.self, at: 0)
            #expect(left > 0, "the worker stopped before the end of the window")
        }
    }
}
