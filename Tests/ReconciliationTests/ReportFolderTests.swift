import AppStoreSimulator
import Foundation
import Postgres
import Reconciliation
import TestSupport
import Testing

/// A report folder appears whole, and only for a finished run (SPEC section 11): the real
/// `reconcile run` killed while writing its report, after writing it, and after finishing the run.
@Suite("Report folders under kill -9")
struct ReportFolderTests {
    @Test(arguments: [
        ("report.write", false),  // report half written aside
        ("report.written", false),  // report whole aside, run not finished
        ("report.finished", true),  // run finished, report not yet renamed into place
    ])
    func aKilledRunLeavesNoFolderAndOnlyFinishedRunsGetOne(point: String, killedRunFinished: Bool) async throws {
        let (world, _) = try await ReferenceRuns.shared.world(filler: 10)
        let (database, connection) = try TestDatabase.migrated("report_folder")
        try world.plant(on: connection)
        let reports = world.reports(database)
        let sim = try world.simulator()
        var killedRun: Int64 = 0
        try await sim.withRunning { running in
            let killed = try world.reconcile(database, simulator: running.baseURL, failpoint: point, label: "killed")
            try await killed.waitUntilStopped()
            try await killed.killNow()
            try await waitForRunLockRelease(connection)
            killedRun = try connection.query("SELECT max(id) FROM reconcile.runs")[0].decode(Int64.self, at: 0)
            #expect(!FileManager.default.fileExists(atPath: reports.appendingPathComponent("run-\(killedRun)").path),
                    "killed at \(point): run-\(killedRun) must not appear before it is finished and whole")
            let (status, next) = try await world.reconcileToEnd(database, simulator: running.baseURL, label: "next")
            #expect(status == 0, "\(next.output)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: reports.path).sorted()
        #expect(names.allSatisfy { !$0.hasPrefix(".") }, "leftovers: \(names)")
        // The world's planted history has finished runs of its own, without folders.
        let finished = try connection.query(
            """
            SELECT id FROM reconcile.runs WHERE status IN ('completed', 'completed_with_unresolved') AND id >= $1
             ORDER BY id
            """, [killedRun]
        ).map { "run-\(try $0.decode(Int64.self, at: 0))" }
        #expect(names == finished, "folders \(names), finished runs \(finished)")
        #expect(finished.count == (killedRunFinished ? 2 : 1))
        for name in names {
            for file in ["report.json", "report.md", "report.html", "review.csv"] {
                #expect(FileManager.default.fileExists(atPath: reports.appendingPathComponent("\(name)/\(file)").path))
            }
            let json = try JSONSerialization.jsonObject(
                with: Data(contentsOf: reports.appendingPathComponent("\(name)/report.json"))) as? [String: Any]
            #expect((json?["status"] as? String)?.hasPrefix("completed") == true)
        }
    }
}
