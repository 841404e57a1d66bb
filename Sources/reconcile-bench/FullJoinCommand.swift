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

    /// The statement timed: it materialises its result, as the diff materialises its findings.
    static let statement = """
        CREATE TEMP TABLE bench_full_join AS
        SELECT a.transaction_id AS apple_transaction_id, d.transaction_id AS delivered_transaction_id, d.user_id,
               a.product_id AS apple_product_id, d.product_id AS delivered_product_id,
               a.quantity AS apple_quantity, d.quantity AS delivered_quantity, a.revocation_date, d.revoked_at
          FROM reconcile.apple_transactions a
          FULL JOIN reconcile.deliveries d ON d.transaction_id = a.transaction_id
         WHERE a.transaction_id IS NULL OR d.transaction_id IS NULL
            OR a.product_id <> d.product_id OR a.quantity <> d.quantity
            OR (a.revocation_date IS NOT NULL AND d.revoked_at IS NULL)
        """

    func run() throws {
        let connection = try Connection(url: ProcessInfo.processInfo.environment["DATABASE_URL"])
        // As a person would run it (the server's work_mem), then with the memory the diff gives
        // itself: the ratio of SPEC section 12 is taken against the second, the stricter one.
        for (name, workMem) in [("full_join_seconds_server_work_mem", nil), ("full_join_seconds", Differ.workMem)] {
            try connection.transaction {
                if let workMem { try connection.execute("SET LOCAL work_mem = '\(workMem)'") }
                let started = Date()
                let rows = try connection.execute(Self.statement)
                let elapsed = Date().timeIntervalSince(started)
                try connection.execute("DROP TABLE bench_full_join")
                Bench.log("the FULL JOIN kept \(rows) rows")
                Bench.emit(name, Bench.seconds(elapsed))
            }
        }
    }
}
