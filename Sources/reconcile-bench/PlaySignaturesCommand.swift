import AppStoreSimulator
import ArgumentParser
import Crypto
import _CryptoExtras
import Foundation
import GooglePlay

/// `reconcile-bench play-signatures`: local Google Play purchase verification on one core (SPEC
/// section 12), over distinct purchases signed with the simulator's licence key: the upload's
/// JSON read, `purchaseData` parsed, its RSA PKCS#1 v1.5 SHA-1 signature checked. Beside it the
/// ceiling: the bare signature check `_CryptoExtras` does with the same key over digests computed
/// ahead, on the same core, in interleaved rounds (a change of the machine's speed touches both).
struct PlaySignaturesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play-signatures", abstract: "Play purchase-signature checks per CPU second on one core.")

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "Distinct signed purchases to verify.")
    var count = 5_000

    static let package = "com.example.coins.android"

    func run() async throws {
        let simulator = try AppStoreSimulator(
            configuration: .init(stateDirectory: sim.directory, playPackageNames: [Self.package]))
        let settings = try simulator.play.settings(baseURL: "http://127.0.0.1")
        let verifier = PlayPurchaseVerifier(keys: try PlayLicenceKeys(setting: settings.licenseKeysSetting))
        let payloads = try sign(simulator)
        let ceiling = try Ceiling(payloads, key: verifier.keys[Self.package]!.publicKey)
        let rounds = 20
        let perRound = max(1, payloads.count / rounds)
        var play = (cpu: 0.0, count: 0), bare = (cpu: 0.0, count: 0)
        for round in 0..<rounds {
            let chunk = payloads[min(payloads.count, round * perRound)..<min(payloads.count, (round + 1) * perRound)]
            let cpu = Bench.cpuSeconds()
            for payload in chunk {
                guard case .valid = verifier.verify(payload: payload.utf8) else {
                    throw ValidationError("a bench Play purchase did not verify")
                }
            }
            play = (play.cpu + Bench.cpuSeconds() - cpu, play.count + chunk.count)
            bare = (bare.cpu + (try ceiling.check(times: chunk.count)), bare.count + chunk.count)
        }
        Bench.emit("play_signature_verifications_per_cpu_second", String(format: "%.0f", Double(play.count) / play.cpu))
        Bench.emit("rsa_sha1_signature_checks_per_cpu_second", String(format: "%.0f", Double(bare.count) / bare.cpu))
    }

    /// The signature check alone, over the same signatures and their digests computed ahead.
    struct Ceiling {
        let key: _RSA.Signing.PublicKey
        let checks: [(digest: Insecure.SHA1Digest, signature: _RSA.Signing.RSASignature)]

        init(_ payloads: [String], key: _RSA.Signing.PublicKey) throws {
            self.key = key
            checks = try payloads.prefix(256).map { payload in
                let upload = try PlayPurchaseUpload(payload: payload.utf8)
                return (Insecure.SHA1.hash(data: Array(upload.purchaseData.utf8)),
                        _RSA.Signing.RSASignature(rawRepresentation: upload.signature))
            }
        }

        /// The CPU seconds `times` checks take.
        func check(times: Int) throws -> Double {
            let cpu = Bench.cpuSeconds()
            for index in 0..<times {
                let check = checks[index % checks.count]
                guard key.isValidSignature(check.signature, for: check.digest, padding: .insecurePKCS1v1_5) else {
                    throw ValidationError("an RSA signature did not verify")
                }
            }
            return Bench.cpuSeconds() - cpu
        }
    }

    /// Distinct purchases as the Android client uploads them.
    func sign(_ simulator: AppStoreSimulator) throws -> [String] {
        let now = Date().millisecondsSince1970
        return try (0..<count).map { index in
            var request = PlayPurchaseRequest(
                packageName: Self.package, productId: BenchWorld.consumables[index % BenchWorld.consumables.count].0,
                obfuscatedAccountId: "user-\(index)", acknowledged: true, purchaseTimeMillis: now - Int64(index) * 1000)
            request.purchaseToken = "bench-token-\(index)-" + String(repeating: "x", count: 100)
            let created = try simulator.play.createPurchase(request)
            let payload = ["purchaseData": created.purchaseData, "signature": created.signature]
            return String(decoding: try JSONEncoder().encode(payload), as: UTF8.self)
        }
    }
}
