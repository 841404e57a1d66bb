import AppStoreTestSupport
import Foundation
import Testing
@_spi(CMS) import X509

@testable import AppStore

@Suite("App receipt signatures")
struct ReceiptSignatureTests {
    static let realReceipts = ReceiptFacts.all.map(\.file)
    static let xcodeReceipts = [
        "xcode-app-receipt-empty.b64", "xcode-app-receipt-with-transaction.b64", "tpinappreceipt-receipt-xcode.b64",
    ]

    @Test("real receipts verify to Apple Inc. Root at their creation date", arguments: realReceipts)
    func realReceiptVerifiesAtCreation(file: String) async throws {
        let receipt = try ReceiptParsingTests.receipt(file)
        let result = try await receipt.verifySignature(trustRoots: TrustedRoots([Vectors.certificate("AppleIncRootCertificate.cer")]))
        guard case .valid(let signer) = result else {
            Issue.record("\(file): \(result)")
            return
        }
        #expect(String(describing: signer.subject).contains("Receipt Signing"))
    }

    @Test("the bundled default roots verify real receipts", arguments: realReceipts)
    func bundledRootsVerify(file: String) async throws {
        let result = try await ReceiptParsingTests.receipt(file).verifySignature()
        guard case .valid = result else {
            Issue.record("\(file): \(result)")
            return
        }
    }

    @Test("real receipts fail when checked now: their signing certificates expired", arguments: realReceipts)
    func realReceiptFailsNow(file: String) async throws {
        let receipt = try ReceiptParsingTests.receipt(file)
        let result = await receipt.verifySignature(at: Date())
        guard case .invalid(.untrustedChain) = result else {
            Issue.record("\(file): expected an untrusted chain now, got \(result)")
            return
        }
    }

    @Test("real receipts do not verify against Apple Root CA - G3 alone", arguments: realReceipts)
    func realReceiptFailsWithWrongRoot(file: String) async throws {
        let result = try await ReceiptParsingTests.receipt(file)
            .verifySignature(trustRoots: TrustedRoots([try Vectors.certificate("AppleRootCA-G3.cer")]))
        guard case .invalid(.untrustedChain) = result else {
            Issue.record("\(file): \(result)")
            return
        }
    }

    @Test("Xcode receipts verify with the StoreKit test certificate as root", arguments: xcodeReceipts)
    func xcodeReceiptVerifiesWithStoreKitCertificate(file: String) async throws {
        let receipt = try ReceiptParsingTests.receipt(file)
        let roots = TrustedRoots([try Vectors.certificate("StoreKitTestCertificate.cer")])
        let result = await receipt.verifySignature(trustRoots: roots, requireAppleExtensions: false)
        guard case .valid = result else {
            Issue.record("\(file): \(result)")
            return
        }
    }

    @Test("Xcode receipts are not trusted by Apple's roots", arguments: xcodeReceipts)
    func xcodeReceiptRejectedByAppleRoots(file: String) async throws {
        let result = try await ReceiptParsingTests.receipt(file).verifySignature()
        guard case .invalid(.untrustedChain) = result else {
            Issue.record("\(file): \(result)")
            return
        }
    }

    @Test("Apple's marker extensions are demanded: the StoreKit certificate alone is not enough")
    func appleExtensionsRequiredByDefault() async throws {
        let receipt = try ReceiptParsingTests.receipt("xcode-app-receipt-empty.b64")
        let roots = TrustedRoots([try Vectors.certificate("StoreKitTestCertificate.cer")])
        guard case .invalid(.untrustedChain) = await receipt.verifySignature(trustRoots: roots) else {
            Issue.record("a chain without Apple's OIDs was accepted")
            return
        }
    }

    @Test("a receipt whose content was edited fails the signature check")
    func editedContentFailsSignature() async throws {
        var bytes = Array(try Vectors.data("receipts/tpinappreceipt-receipt-production.b64").base64Decoded())
        let needle = Array("org.getpure.pure.Week".utf8)
        let offset = try #require(bytes.indices.first { bytes[$0...].starts(with: needle) })
        bytes[offset + needle.count - 4] = UInt8(ascii: "Y")  // "Week" → "Yeek"
        let receipt = try AppReceipt(berEncoded: bytes)
        #expect(receipt.inAppPurchases.contains { $0.productId == "org.getpure.pure.Yeek" })
        #expect(await receipt.verifySignature() == .invalid(.badSignature))
    }
}

@Suite("Receipts signed like the simulator signs them")
struct SimulatorStyleReceiptTests {
    static let payload = AppReceipt.Payload(
        environment: .productionSandbox,
        bundleId: "com.example.coins",
        appVersion: "7",
        creationDate: Date(timeIntervalSince1970: 1_790_000_000),
        inAppPurchases: [
            .init(
                quantity: 1, productId: "coins.100", transactionId: "2000000000000001",
                purchaseDate: Date(timeIntervalSince1970: 1_789_999_000), originalTransactionId: "2000000000000001"
            )
        ]
    )

    static func sign(_ content: [UInt8], by ca: TestCertificateAuthority, signingTime: Date?) throws -> [UInt8] {
        try CMS.sign(
            content, additionalIntermediateCertificates: [ca.intermediate], certificate: ca.leaf,
            privateKey: .init(ca.leafKey), signingTime: signingTime, detached: false
        )
    }

    @Test(
        "a payload signed with swift-certificates' CMS.sign parses and verifies",
        arguments: [nil, Date(timeIntervalSince1970: 1_790_000_000)]
    )
    func cmsSignedReceiptVerifies(signingTime: Date?) async throws {
        let ca = try TestCertificateAuthority()
        let der = try Self.sign(Self.payload.derEncoded(), by: ca, signingTime: signingTime)
        let receipt = try Receipt(base64Encoded: Data(der).base64EncodedString())
        guard case .app(let app) = receipt else {
            Issue.record("not recognised as an app receipt")
            return
        }
        #expect(app.payload == Self.payload)
        guard case .valid = await app.verifySignature(trustRoots: ca.roots) else {
            Issue.record("\(await app.verifySignature(trustRoots: ca.roots))")
            return
        }
    }

    @Test("a CMS.sign receipt from another CA is not trusted")
    func otherCARejected() async throws {
        let ca = try TestCertificateAuthority()
        let other = try TestCertificateAuthority()
        let receipt = try AppReceipt(berEncoded: Self.sign(Self.payload.derEncoded(), by: ca, signingTime: nil))
        guard case .invalid(.untrustedChain) = await receipt.verifySignature(trustRoots: other.roots) else {
            Issue.record("a foreign CA was trusted")
            return
        }
    }

    @Test("content edited after signing fails: the signature without signed attributes, the digest with them")
    func editedContentFails() async throws {
        let ca = try TestCertificateAuthority()
        let content = try Self.payload.derEncoded()
        for (signingTime, expected) in [
            (nil, ReceiptSignatureFailure.badSignature),
            (Date(timeIntervalSince1970: 1_790_000_000), .digestMismatch),
        ] {
            var der = try Self.sign(content, by: ca, signingTime: signingTime)
            let needle = Array("coins.100".utf8)
            let offset = try #require(der.indices.first { der[$0...].starts(with: needle) })
            der[offset] = UInt8(ascii: "k")
            let receipt = try AppReceipt(berEncoded: der)
            #expect(receipt.inAppPurchases.first?.productId == "koins.100")
            #expect(await receipt.verifySignature(trustRoots: ca.roots) == .invalid(expected))
        }
    }
}
