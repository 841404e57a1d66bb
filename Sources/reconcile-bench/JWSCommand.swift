import AppStore
import AppStoreSimulator
import ArgumentParser
import Crypto
import Foundation

/// `reconcile-bench jws`: local StoreKit 2 JWS verification on one core, over transactions signed
/// by the simulator's CA (a chain laid out like Apple's). Writes the same JWS to a file for the
/// comparison with Apple's Python `SignedDataVerifier`.
struct JWSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jws", abstract: "JWS verifications per second on one core.")

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "Distinct signed transactions to verify.")
    var count = 20_000

    @Option(help: "Write the JWS here, one per line.")
    var output: String

    @Flag(help: "Verify the JWS already in --output (signed by this state directory) instead of signing new ones.")
    var reuse = false

    func run() async throws {
        let simulator = try sim.simulator()
        let tokens = reuse
            ? try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map(String.init)
            : try sign(simulator)
        let verifier = SignedDataVerifier(
            configuration: .init(trustedRoots: TrustedRoots([simulator.ca.root]), bundleIds: [BenchWorld.bundle]))
        // The first verification builds and checks the chain, as it does once per run in the job.
        guard case .valid = await verifier.verifyTransaction(tokens[0]) else {
            throw ValidationError("a bench JWS did not verify")
        }
        // Interleaved rounds: a change of the machine's speed during the measurement (other
        // work, frequency) touches the JWS and its ceiling alike, so their ratio holds.
        let ceiling = try SignatureCeiling(tokens)
        let rounds = 20
        let perRound = max(1, tokens.count / rounds)
        var jws = (wall: 0.0, cpu: 0.0, count: 0), bare = (cpu: 0.0, count: 0)
        for round in 0..<rounds {
            let chunk = tokens[min(tokens.count, round * perRound)..<min(tokens.count, (round + 1) * perRound)]
            let (wall, cpu) = try await Self.verifyAll(chunk, with: verifier)
            jws = (jws.wall + wall, jws.cpu + cpu, jws.count + chunk.count)
            bare = (bare.cpu + (try ceiling.check(times: min(chunk.count, 1000))), bare.count + min(chunk.count, 1000))
        }
        Bench.emit("jws_verifications_per_second_wall", String(format: "%.0f", Double(jws.count) / jws.wall))
        Bench.emit("jws_verifications_per_cpu_second", String(format: "%.0f", Double(jws.count) / jws.cpu))
        Bench.emit("p256_signature_checks_per_cpu_second", String(format: "%.0f", Double(bare.count) / bare.cpu))
    }

    /// The ES256 signature check alone, over digests already computed, on the same core: what no
    /// JWS verification can beat. Distinct signatures over distinct digests, as the tokens are:
    /// one repeated check lets the branch predictor learn the variable-time inverse's path.
    struct SignatureCeiling {
        let key: P256.Signing.PublicKey
        let checks: [(digest: SHA256.Digest, signature: P256.Signing.ECDSASignature)]

        init(_ tokens: [String]) throws {
            let privateKey = P256.Signing.PrivateKey()
            checks = try tokens.prefix(256).map { token in
                let digest = SHA256.hash(data: Data(token.utf8.prefix(while: { $0 != UInt8(ascii: ".") })) + Data(token.utf8.suffix(64)))
                return (digest, try privateKey.signature(for: digest))
            }
            key = privateKey.publicKey
        }

        /// The CPU seconds `times` checks take.
        func check(times: Int) throws -> Double {
            let cpu = Bench.cpuSeconds()
            for index in 0..<times {
                let check = checks[index % checks.count]
                guard key.isValidSignature(check.signature, for: check.digest) else {
                    throw ValidationError("a P-256 signature did not verify")
                }
            }
            return Bench.cpuSeconds() - cpu
        }
    }

    /// Distinct purchases, signed by the simulator's leaf as Apple's leaf signs them.
    func sign(_ simulator: AppStoreSimulator) throws -> [String] {
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
        return tokens
    }

    /// One task, one JWS after the other, so one core at a time: the wall and CPU seconds taken.
    /// Off the main actor, as the job's verification tasks are, so that no call hops threads.
    nonisolated static func verifyAll(_ tokens: ArraySlice<String>, with verifier: SignedDataVerifier) async throws
        -> (wall: Double, cpu: Double)
    {
        let cpu = Bench.cpuSeconds()
        let started = ContinuousClock.now
        for token in tokens {
            guard case .valid = await verifier.verifyTransaction(token) else {
                throw ValidationError("a bench JWS did not verify")
            }
        }
        return ((ContinuousClock.now - started).seconds, Bench.cpuSeconds() - cpu)
    }
}
