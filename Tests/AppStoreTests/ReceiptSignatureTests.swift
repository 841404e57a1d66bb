import Foundation
import Testing
import X509

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
