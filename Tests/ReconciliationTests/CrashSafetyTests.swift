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
        let database = try TestDatabase.create("crash_kill")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
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
        #expect(differences.isEmpty, "killed at \(point), then run again:\n\(differences)")
        let runs = try connection.query("SELECT status, coalesce(error, '') FROM reconcile.runs ORDER BY id OFFSET 1")
            .map { "\(try $0.decode(String.self, at: 0)): \(try $0.decode(String.self, at: 1))" }
        #expect(runs == [
            "failed: the process ended without finishing the run (killed, or the machine stopped)", "completed: ",
        ])
    }
}
