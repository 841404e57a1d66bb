import AppStore
import AppStoreSimulator
import ArgumentParser
import Foundation

/// `reconcile-bench receipts`: local parsing of StoreKit 1 app receipts (PKCS#7, every attribute
/// of every in-app purchase) on one core. Writes the same receipts to a file for the comparison
/// with Apple's Python `ReceiptUtility`.
struct ReceiptsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipts", abstract: "App receipts parsed per second on one core.")

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "Receipts to parse.")
    var count = 5000

    @Option(help: "In-app purchases per receipt.")
    var purchases = 8

    @Option(help: "Write the receipts here (base64), one per line.")
    var output: String

    @Flag(help: "Parse the receipts already in --output instead of issuing new ones.")
    var reuse = false

    func run() throws {
        let simulator = try sim.simulator()
        let receipts = reuse
            ? try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map(String.init)
            : try issue(simulator)
        let started = ContinuousClock.now
        let cpu = Bench.cpuSeconds()
        var parsed = 0
        for receipt in receipts {
            parsed += try AppReceipt(base64Encoded: receipt).inAppPurchases.count
        }
        let cpuSeconds = Bench.cpuSeconds() - cpu
        let wall = (ContinuousClock.now - started).seconds
        guard parsed == count * purchases else { throw ValidationError("a bench receipt lost purchases") }
        Bench.emit("receipt_parses_per_second_wall", String(format: "%.0f", Double(count) / wall))
        Bench.emit("receipt_parses_per_cpu_second", String(format: "%.0f", Double(count) / cpuSeconds))
    }

    /// `count` receipts of `purchases` purchases each, issued by the simulator and written to --output.
    func issue(_ simulator: AppStoreSimulator) throws -> [String] {
        let receipts = try (0..<count).map { index in
            let purchased = Date().addingTimeInterval(-86400 * 30)
            let items = (0..<purchases).map { offset in
                SimulatedReceipt.Purchase(
                    productID: BenchWorld.consumables[(index + offset) % BenchWorld.consumables.count].0,
                    transactionID: String(5_000_000_000_000_000 + index * purchases + offset),
                    purchaseDate: purchased.addingTimeInterval(Double(offset * 3600)), quantity: 1)
            }
            return try simulator.issueReceipt(
                SimulatedReceipt(bundleID: BenchWorld.bundle, environment: .production, purchases: items)
            ).receiptData
        }
        try (receipts.joined(separator: "\n") + "\n").write(toFile: output, atomically: true, encoding: .utf8)
        return receipts
    }
}
