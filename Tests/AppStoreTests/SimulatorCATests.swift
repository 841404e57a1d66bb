import AppStore
import AppStoreSimulator
import Foundation
import SwiftASN1
import Testing
@_spi(CMS) @_spi(FixedExpiryValidationTime) import X509

@Suite struct SimulatorCATests {
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("simca-\(UUID().uuidString)", isDirectory: true)
    }

    @Test func theCACarriesApplesMarkerOIDsInAppleLayout() throws {
        let ca = try SimulatorCA.generate()
        #expect(ca.root.issuer == ca.root.subject)
        #expect(ca.intermediate.issuer == ca.root.subject)
        #expect(ca.leaf.issuer == ca.intermediate.subject)
        #expect(ca.intermediate.extensions[oid: [1, 2, 840, 113_635, 100, 6, 2, 1]] != nil)
        #expect(ca.leaf.extensions[oid: [1, 2, 840, 113_635, 100, 6, 11, 1]] != nil)
        #expect(ca.leaf.extensions[oid: [1, 2, 840, 113_635, 100, 6, 2, 1]] == nil)
        #expect(try ca.leaf.extensions.basicConstraints == .notCertificateAuthority)
    }

    @Test func theCAPersistsAcrossRestarts() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try SimulatorCA.loadOrCreate(stateDirectory: directory)
        let second = try SimulatorCA.loadOrCreate(stateDirectory: directory)
        #expect(first.root == second.root)
        #expect(first.leaf == second.leaf)
        #expect(first.leafKey.rawRepresentation == second.leafKey.rawRepresentation)
        // The exported root files are what APPLE_ROOT_CERTIFICATES points at.
        let pem = try String(
            contentsOf: directory.appendingPathComponent(SimulatorCA.FileName.rootCertificate), encoding: .utf8)
        #expect(try Certificate(pemEncoded: pem) == first.root)
        let der = try Data(contentsOf: directory.appendingPathComponent(SimulatorCA.FileName.rootCertificateDER))
        #expect(try Certificate(derEncoded: Array(der)) == first.root)
        let keyAttributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent("leaf-key.pem").path)
        #expect((keyAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func aReceiptIssuedBeforeARestartStillVerifies() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try AppStoreSimulator(configuration: .init(stateDirectory: directory))
        let receipt = try before.issueReceipt(.sample(.production)).receiptData
        let after = try AppStoreSimulator(configuration: .init(stateDirectory: directory))
        let bytes = Array(try #require(Data(base64Encoded: receipt)))
        #expect(await after.ca.isValidReceiptSignature(bytes, at: Date()))
        let stranger = try SimulatorCA.generate()
        #expect(await !stranger.isValidReceiptSignature(bytes, at: Date()))
    }

    @Test func simulatorReceiptsPassTheJobsOwnReceiptVerificationWithTheExportedRoot() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let simulator = try AppStoreSimulator(configuration: .init(stateDirectory: directory))
        let issued = try simulator.issueReceipt(.sample(.sandbox))
        let receipt = try AppReceipt(base64Encoded: issued.receiptData)
        #expect(receipt.payload.environment == .productionSandbox)
        #expect(receipt.payload.bundleId == "com.example.coins")
        #expect(receipt.inAppPurchases.map(\.transactionId) == ["2000000000000001", "2000000000000002"])

        // What an operator does: APPLE_ROOT_CERTIFICATES=<state-dir>/root.pem.
        let rootFile = try Data(contentsOf: directory.appendingPathComponent(SimulatorCA.FileName.rootCertificate))
        let roots = try TrustedRoots(derOrPEM: Array(rootFile))
        guard case .valid(let signer) = await receipt.verifySignature(trustRoots: roots) else {
            Issue.record("a simulator receipt does not verify against the exported root")
            return
        }
        #expect(signer == simulator.ca.leaf)
        guard case .invalid = await receipt.verifySignature(trustRoots: .apple) else {
            Issue.record("a simulator receipt must not verify against Apple's roots")
            return
        }
    }

    @Test func signedReceiptsArePKCS7SignedDataWithTheChainIncluded() async throws {
        let ca = try SimulatorCA.generate()
        let payload: [UInt8] = [0x31, 0x00]
        let signed = try ca.signReceipt(payload: payload)
        // ContentInfo { signedData OID, [0] SignedData }.
        let root = try DER.parse(signed)
        guard case .constructed(let nodes) = root.content else {
            Issue.record("not a SEQUENCE")
            return
        }
        var iterator = nodes.makeIterator()
        let first = iterator.next()
        let oid = try ASN1ObjectIdentifier(derEncoded: try #require(first))
        #expect(oid == [1, 2, 840, 113_549, 1, 7, 2])
        let result = await CMS.isValidAttachedSignature(
            signatureBytes: signed, trustRoots: CertificateStore([ca.root])
        ) { RFC5280Policy(fixedExpiryValidationTime: Date()) }
        guard case .success(let valid) = result else {
            Issue.record("signature does not verify: \(result)")
            return
        }
        #expect(valid.signer == ca.leaf)
    }
}
