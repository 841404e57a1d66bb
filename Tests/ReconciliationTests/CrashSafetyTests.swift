import AppStoreSimulator
import Foundation
import Postgres
import Reconciliation
import TestSupport
import Testing

/// SPEC section 11, on the real executable: `reconcile run` killed with SIGKILL at chosen points
/// (a failpoint makes it stop itself there, the test kills it), its database server crashed under
/// it, or told to stop with SIGTERM; then run again. The end state must be exactly that of one
/// uninterrupted run over the same world in another database.
@Suite("Crash safety: the real process killed, signalled, its database restarted")
struct CrashSafetyTests {
    /// Filler customers: enough uploads for two verification batches (64 per batch).
    static let filler = 50

    @Test(arguments: [
        "verify.verdict@5",  // five uploads verified by Apple, their batch not recorded
        "verify.record",  // inside the transaction recording the first batch
        "verify.recorded",  // the first batch committed, the second not yet claimed
        "diff.computed",  // inside the diff transaction
        "queue.upsert",  // inside the queue upsert: items inserted, auto-resolution pending
        "report.write",  // diff and queue committed, report half written, run not finished
    ])
    func killedAnywhereThenRunAgainEndsAsAnUninterruptedRun(_ point: String) async throws {
        let (world, reference) = try await ReferenceRuns.shared.world(filler: Self.filler)
        let (database, connection) = try TestDatabase.migrated("crash_kill")
        try world.plant(on: connection)

        let sim = try world.simulator()
        try await sim.withRunning { running in
            let killed = try world.reconcile(database, simulator: running.baseURL, failpoint: point, label: "killed")
            try await killed.waitUntilStopped()
            try await killed.killNow()
            try await waitForRunLockRelease(connection)
            let (status, next) = try await world.reconcileToEnd(database, simulator: running.baseURL, label: "next")
            #expect(status == 0, "\(next.output)")
        }

        let outcome = try Outcome(connection, reports: world.reports(database))
        let differences = outcome.differences(from: reference)
        #expect(Self.same(differences), "killed at \(point), then run again:\n\(differences)")
        let runs = try connection.query("SELECT status, coalesce(error, '') FROM reconcile.runs ORDER BY id OFFSET 1")
            .map { "\(try $0.decode(String.self, at: 0)): \(try $0.decode(String.self, at: 1))" }
        #expect(runs == [
            "failed: the process ended without finishing the run (killed, or the machine stopped)", "completed: ",
        ])
    }
}

extension CrashSafetyTests {
    /// `pg_ctl restart -m immediate` (every backend killed, recovery from the WAL) on a cluster of
    /// this test's own, once while the run talks to Apple and once inside its diff transaction:
    /// the run fails at once with a message that names the database, and the next run ends where
    /// an uninterrupted one would.
    @Test func aDatabaseRestartFailsTheRunClearlyAndTheNextRunCompletes() async throws {
        let (world, reference) = try await ReferenceRuns.shared.world(filler: Self.filler)
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        let sim = try world.simulator()
        try await sim.withRunning { running in
            for point in ["verify.verdict@5", "diff.computed"] {
                let database = try cluster.createDatabase("crash_restart")
                let setup = try database.connect()
                _ = try Schema.migrate(setup)
                try world.plant(on: setup)

                let cut = try world.reconcile(database, simulator: running.baseURL, failpoint: point, label: "cut")
                try await cut.waitUntilStopped()
                try cluster.restartImmediately()
                cut.send(SIGCONT)
                let status = try await cut.waitForExit(timeout: .seconds(60))
                #expect(status == 1, "\(point): \(cut.output)")
                let message = cut.standardError.split(separator: "\n").last { $0.hasPrefix("reconcile: ") } ?? ""
                #expect(message.hasPrefix("reconcile: lost the database connection (server closed the connection"),
                        "\(point): the message must say the database connection was lost: \(cut.output)")
                #expect(!cut.standardError.contains("Fatal error"), "\(point): a trap, not an error: \(cut.output)")

                let (again, next) = try await world.reconcileToEnd(database, simulator: running.baseURL, label: "next")
                #expect(again == 0, "\(point): \(next.output)")
                let connection = try database.connect()
                let differences = try Outcome(connection, reports: world.reports(database)).differences(from: reference)
                #expect(Self.same(differences), "database restarted at \(point), then run again:\n\(differences)")
                let runs = try connection.query(
                    "SELECT status, coalesce(error, '') FROM reconcile.runs ORDER BY id OFFSET 1"
                ).map { "\(try $0.decode(String.self, at: 0)): \(try $0.decode(String.self, at: 1))" }
                // Recorded by the run itself on a new session once the server was back.
                #expect(runs.count == 2 && runs[0].hasPrefix("failed: server closed the connection unexpectedly")
                        && runs[1] == "completed: ", "\(runs)")
            }
        }
    }

    /// SIGTERM while the run waits on Apple: no new upload is sent, the batch in flight is
    /// rolled back, the run is recorded as interrupted with the reason, the exit status is 1;
    /// the next run finishes the work.
    @Test func sigtermStopsTakingWorkAndTheNextRunResumes() async throws {
        let (world, reference) = try await ReferenceRuns.shared.world(filler: Self.filler)
        let (database, connection) = try TestDatabase.migrated("crash_sigterm")
        try world.plant(on: connection)

        let sim = try world.simulator()
        try await sim.withRunning { running in
            var slow = SimulatorFaults.none
            slow.latencyMilliseconds = 200
            sim.state.faults = slow
            let concurrency = 2
            let run = try world.reconcile(
                database, simulator: running.baseURL, extra: ["RECONCILE_CONCURRENCY": "\(concurrency)"], label: "term")
            while sim.state.stats.verifyReceiptRequests < 6 {
                guard run.process.isRunning else { Issue.record("the run ended early: \(run.output)"); return }
                try await Task.sleep(for: .milliseconds(20))
            }
            let sent = sim.state.stats.verifyReceiptRequests
            run.send(SIGTERM)
            let status = try await run.waitForExit(timeout: .seconds(60))
            #expect(status == 1, "\(run.output)")
            #expect(run.standardError.contains("reconcile: interrupted"), "\(run.output)")
            let after = sim.state.stats.verifyReceiptRequests
            #expect(after <= sent + 2 * concurrency, "the run kept sending uploads to Apple after SIGTERM")
            #expect(after < world.receiptUploads, "the run did not stop before the end of its work")
            let recorded = try connection.query(
                "SELECT status, coalesce(error, '') FROM reconcile.runs ORDER BY id DESC LIMIT 1")
            #expect(try recorded[0].decode(String.self, at: 0) == "interrupted")
            #expect(try recorded[0].decode(String.self, at: 1).contains("interrupted by a signal"))
            let claimed = try connection.query(
                "SELECT count(*) FROM reconcile.upload_verifications WHERE state IN ('verified', 'invalid')")
            #expect(try claimed[0].decode(Int.self, at: 0) < world.uploads.count)

            sim.state.faults = .none
            let (again, next) = try await world.reconcileToEnd(database, simulator: running.baseURL, label: "next")
            #expect(again == 0, "\(next.output)")
        }
        let differences = try Outcome(connection, reports: world.reports(database)).differences(from: reference)
        #expect(Self.same(differences), "SIGTERM, then run again:\n\(differences)")
    }
}
