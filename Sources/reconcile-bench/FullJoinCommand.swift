import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile-bench full-join`: the yardstick of SPEC section 12, one hand-written `FULL JOIN` of
/// the white table against the ledger that keeps every row where the two disagree, as a person
/// reconciling by hand would write it.
struct FullJoinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "full-join",
        abstract: "Time one hand-written FULL JOIN of reconcile.apple_transactions and reconcile.deliveries.")

    /// The statement timed.
    static let statement: SQLFile = "bench/full_join.sql"

    func run() throws {
        let connection = try Connection(url: ProcessInfo.processInfo.environment["DATABASE_URL"])
        // As a person would run it (the server's work_mem), then with the memory the diff gives
        // its later stages. The ratio of SPEC section 12 is taken against the faster of the two:
        // 256 MB was once the faster, and at 5M is now the slower (one hash table of millions of
        // keys misses the CPU's caches), and the diff's own passes over the whole tables run with
        // a few MB (Differ.passWorkMem).
        var fastest = Double.infinity
        for (name, workMem) in [("full_join_seconds_server_work_mem", nil), ("full_join_seconds_diff_work_mem", Differ.workMem)] {
            try connection.transaction {
                if let workMem { try connection.setParameter("work_mem", to: workMem, local: true) }
                let started = Date()
                let rows = try connection.execute(Self.statement)
                let elapsed = Date().timeIntervalSince(started)
                Bench.log("the FULL JOIN kept \(rows) rows")
                Bench.emit(name, Bench.seconds(elapsed))
                fastest = min(fastest, elapsed)
            }
        }
        Bench.emit("full_join_seconds", Bench.seconds(fastest))
    }
}
