import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciliation

/// `reconcile-bench desk`: the support desk's latency over the generated history (SPEC section
/// 12): `reconcile lookup --user` of a customer with 1,000 transactions, p95 over 200 lookups,
/// Apple round trips excluded (no Server API credentials). The customer is planted once: 1,000
/// verified purchases, each uploaded and credited, every tenth one not credited.
struct DeskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "desk", abstract: "Measure reconcile lookup --user latency (p50, p95) over the history.")

    @Option(help: "Lookups measured.")
    var requests = 200

    @Option(help: "Transactions of the planted customer.")
    var transactions = 1000

    static let customer = "desk-bench-customer"

    func validate() throws {
        guard (1...100_000).contains(requests), (1...100_000).contains(transactions) else {
            throw ValidationError("--requests and --transactions must be 1 to 100000")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = try Settings(lookup: {
            environment[$0] ?? ($0 == "RECONCILE_BUNDLE_IDS" ? "com.hncs.szj" : nil)
        })
        let connection = try settings.connect()
        try plant(bundle: settings.bundleIDs[0], on: connection)
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let desk = DeskService(settings: settings, serverAPI: nil, logger: quiet)
        let query = try DeskQuery(.user, Self.customer)
        var milliseconds: [Double] = []
        var shown = 0
        for _ in 0..<requests {
            let started = ContinuousClock.now
            shown = try await desk.lookup(query, on: connection).transactions.count
            let elapsed = ContinuousClock.now - started
            milliseconds.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
        milliseconds.sort()
        func percentile(_ p: Double) -> Double {
            milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * p))]
        }
        Bench.emit("desk_lookup_user_transactions", String(shown))
        Bench.emit("desk_lookup_user_p50_ms", Bench.decimal(percentile(0.5)))
        Bench.emit("desk_lookup_user_p95_ms", Bench.decimal(percentile(0.95)))
        Bench.emit("desk_lookup_user_verdict", percentile(0.95) < 100 ? "pass (p95 < 100 ms)" : "FAIL (p95 >= 100 ms)")
    }

    /// The customer's purchases, uploads, verifications, claims and deliveries, set-based.
    private func plant(bundle: String, on connection: Connection) throws {
        guard try connection.queryFirst(SQL.planted, ["user_id": Self.customer]) == nil else { return }
        try connection.transaction {
            try connection.execute(
                SQL.plant, ["user_id": Self.customer, "transactions": transactions, "bundle_id": bundle])
        }
        try connection.execute(SQL.analyze)
    }

    /// The command's statements (`sql/bench/`).
    enum SQL {
        static let planted: SQLFile = "bench/desk_customer_planted.sql"
        static let plant: SQLFile = "bench/plant_desk_customer.sql"
        static let analyze: SQLFile = "bench/analyze_desk_customer.sql"
    }
}
