import AppStore
import AppStoreSimulator
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Postgres
import Reconciliation

/// `reconcile-bench verify-receipt`: verifyReceipt throughput against a running `appstore-sim`
/// (started by the script with 20 ms of latency), for a one-at-a-time client and for the job's
/// client with `--concurrency` requests in flight. With `--uploads`, also stores that many
/// receipts as uploads for a `reconcile run` to verify, which the script times.
struct VerifyReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-receipt",
        abstract: "verifyReceipt throughput: one at a time versus the job's concurrent client.")

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "The simulator's production verifyReceipt URL.")
    var url: String

    @Option(help: "Receipts verified one at a time.")
    var sequential = 200

    @Option(help: "Receipts verified by the concurrent client.")
    var concurrent = 4000

    @Option(help: "Requests in flight for the concurrent client (RECONCILE_CONCURRENCY).")
    var concurrency = 16

    @Option(help: "Also store this many receipt uploads (DATABASE_URL) for a reconcile run to verify.")
    var uploads = 0

    @Option(help: "Post the receipts to this appstore-sim (started with --prepared-answers) to be judged ahead.")
    var prepareAnswersAt: String?

    func run() async throws {
        let simulator = try sim.simulator()
        let receipts = try (0..<max(sequential, concurrent, uploads)).map { try Self.receipt($0, simulator: simulator) }
        let logger = Logger(label: "reconcile-bench")
        if let prepareAnswersAt { try await Self.prepareAnswers(receipts, simulator: prepareAnswersAt) }

        // The baseline: the same client, one request after the other.
        let one = VerifyReceiptClient.Configuration(productionURL: url, sandboxURL: url, maxConcurrentRequests: 1)
        let sequentialRate = try await VerifyReceiptClient.withClient(configuration: one) { client in
            _ = try await Self.verifyOrFail(receipts[0], client: client, logger: logger)  // connect first
            let started = ContinuousClock.now
            for receipt in receipts.prefix(sequential) {
                _ = try await Self.verifyOrFail(receipt, client: client, logger: logger)
            }
            return Double(sequential) / (ContinuousClock.now - started).seconds
        }
        Bench.emit("verify_receipt_one_at_a_time_per_second", Bench.decimal(sequentialRate))

        let many = VerifyReceiptClient.Configuration(
            productionURL: url, sandboxURL: url, maxConcurrentRequests: concurrency)
        let concurrentRate = try await VerifyReceiptClient.withClient(configuration: many) { client in
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for receipt in receipts.prefix(concurrent) {
                    group.addTask { _ = try await Self.verifyOrFail(receipt, client: client, logger: logger) }
                }
                try await group.waitForAll()
            }
            return Double(concurrent) / (ContinuousClock.now - started).seconds
        }
        Bench.emit("verify_receipt_client_concurrency", "\(concurrency)")
        Bench.emit("verify_receipt_client_per_second", Bench.decimal(concurrentRate))
        Bench.emit("verify_receipt_client_vs_one_at_a_time", Bench.decimal(concurrentRate / sequentialRate))

        if uploads > 0 {
            let connection = try Connection(url: ProcessInfo.processInfo.environment["DATABASE_URL"])
            let stored = try connection.copyIn(SQL.copyUploads) { writer in
                let uploadedAt = Date().addingTimeInterval(-7200)
                for (index, receipt) in receipts.prefix(uploads).enumerated() {
                    try writer.append(["player-\(index)", "app_receipt", receipt, uploadedAt])
                }
            }
            Bench.log("stored \(stored) receipt uploads for reconcile run")
        }
    }

    /// The command's statements (`sql/bench/`).
    enum SQL {
        /// The receipts as uploads for `reconcile run` (`--uploads`).
        static let copyUploads: SQLFile = "bench/copy_receipts_to_verify.sql"
    }

    /// Has the simulator judge every receipt now, so that answering them later costs it a lookup.
    static func prepareAnswers(_ receipts: [String], simulator: String) async throws {
        var request = HTTPClientRequest(url: simulator + "/sim/prepared-answers")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: receipts.joined(separator: "\n")))
        let response = try await HTTPClient.shared.execute(request, timeout: .minutes(10))
        let answer = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .ok else {
            throw ValidationError("appstore-sim did not prepare answers (start it with --prepared-answers): \(answer)")
        }
        Bench.log("appstore-sim prepared its answers: \(answer)")
    }

    /// A receipt of one to three coin packs, as a StoreKit 1 client uploads it.
    static func receipt(_ index: Int, simulator: AppStoreSimulator) throws -> String {
        let purchased = Date().addingTimeInterval(-86400 - Double(index))
        let purchases = (0...(index % 3)).map { offset in
            SimulatedReceipt.Purchase(
                productID: BenchWorld.consumables[(index + offset) % BenchWorld.consumables.count].0,
                transactionID: String(3_000_000_000_000_000 + index * 3 + offset),
                purchaseDate: purchased.addingTimeInterval(Double(offset)), quantity: 1)
        }
        return try simulator.issueReceipt(
            SimulatedReceipt(bundleID: BenchWorld.bundle, environment: .production, purchases: purchases)
        ).receiptData
    }

    /// A measurement that silently counted failures would flatter the client: stop instead.
    static func verifyOrFail(_ receipt: String, client: VerifyReceiptClient, logger: Logger) async throws
        -> VerifiedReceipt
    {
        let outcome = try await client.verify(receiptData: receipt, logger: logger)
        guard case .verified(let verified) = outcome else {
            throw ValidationError("the simulator did not verify a bench receipt: \(outcome)")
        }
        return verified
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
