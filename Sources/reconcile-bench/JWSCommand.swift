import AppStore
import AppStoreSimulator
import ArgumentParser
import Foundation

/// `reconcile-bench jws`: local StoreKit 2 JWS verification on one core, over transactions signed
/// by the simulator's CA (a chain laid out like Apple's). Writes the same JWS to a file for the
/// comparison with Apple's Python `SignedDataVerifier`.
struct JWSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jws", abstract: "JWS verifications per second on one core.")

    @Option(help: "The simulator's state directory (its CA signs the JWS; its root.der is trusted).")
    var simState: String

    @Option(help: "Distinct signed transactions to verify.")
    var count = 20_000

    @Option(help: "Write the JWS here, one per line.")
    var output: String

    func run() async throws {
        let simulator = try AppStoreSimulator(configuration: .init(stateDirectory: URL(fileURLWithPath: simState)))
        let signedAt = Date(millisecondsSince1970: Date().millisecondsSince1970)
        let tokens = try (0..<count).map { index in
            var transaction = JWSTransaction()
            transaction.transactionId = String(4_000_000_000_000_000 + index)
            transaction.originalTransactionId = transaction.transactionId
            transaction.bundleId = BenchWorld.bundle
            transaction.productId = BenchWorld.consumables[index % BenchWorld.consumables.count].0
            transaction.type = .consumable
            transaction.quantity = 1
            transaction.purchaseDate = signedAt.addingTimeInterval(-Double(index))
            transaction.originalPurchaseDate = transaction.purchaseDate
            transaction.signedDate = signedAt
            transaction.inAppOwnershipType = .purchased
            transaction.environment = .production
            transaction.storefront = "CHN"
            transaction.storefrontId = "143465"
            transaction.transactionReason = .purchase
            transaction.price = BenchWorld.consumables[index % BenchWorld.consumables.count].1
            transaction.currency = "CNY"
            transaction.appAccountToken = UUID()
            return try simulator.ca.signJWS(transaction)
        }
        try (tokens.joined(separator: "\n") + "\n").write(toFile: output, atomically: true, encoding: .utf8)

        let verifier = SignedDataVerifier(
            configuration: .init(trustedRoots: TrustedRoots([simulator.ca.root]), bundleIds: [BenchWorld.bundle]))
        // One task, one request after the other: the rate of one core. The first verification
        // builds and checks the chain, as it does once per run in the job.
        let started = ContinuousClock.now
        for token in tokens {
            guard case .valid = await verifier.verifyTransaction(token) else {
                throw ValidationError("a bench JWS did not verify")
            }
        }
        let rate = Double(count) / (ContinuousClock.now - started).seconds
        Bench.emit("jws_verifications_per_second_per_core", String(format: "%.0f", rate))
    }
}
