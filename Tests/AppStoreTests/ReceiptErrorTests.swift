import Foundation
import Testing

@testable import AppStore

@Suite("Malformed receipts")
struct ReceiptErrorTests {
    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    @Test("empty input is .empty")
    func emptyInput() {
        #expect(throws: ReceiptParsingError.empty) { try Receipt(base64Encoded: "  \n ") }
        #expect(throws: ReceiptParsingError.empty) { try AppReceipt(berEncoded: []) }
    }

    @Test("text that is not base64 is .notBase64", arguments: ["not a receipt!", "{\"receipt\": 1}", "ab$cd==="])
    func notBase64(text: String) {
        #expect(throws: ReceiptParsingError.notBase64) { try Receipt(base64Encoded: text) }
    }

    @Test("10 MB of base64 is .tooLarge before it is decoded")
    func tenMegabytes() {
        let garbage = String(repeating: "QUJD", count: 10 * 1024 * 1024 / 4)
        #expect {
            try Receipt(base64Encoded: garbage)
        } throws: { error in
            guard case .tooLarge(_, let limit) = error as? ReceiptParsingError else { return false }
            return limit == AppReceipt.maximumSize
        }
        #expect {
            try AppReceipt(berEncoded: Array(repeating: 0x30, count: 10 * 1024 * 1024))
        } throws: { error in
            guard case .tooLarge = error as? ReceiptParsingError else { return false }
            return true
        }
    }

    @Test("base64 of bytes that are neither PKCS#7 nor a plist is .notAReceipt", arguments: [
        [0x05, 0x00] as [UInt8], Array("hello world".utf8), [0xFF, 0xFE, 0x00],
    ])
    func notAReceipt(bytes: [UInt8]) {
        #expect {
            try Receipt(base64Encoded: Self.base64(bytes))
        } throws: { error in
            guard case .notAReceipt = error as? ReceiptParsingError else { return false }
            return true
        }
    }

    @Test("a DER certificate is ASN.1 but not a PKCS#7 receipt")
    func certificateIsNotAReceipt() throws {
        let certificate = Array(try Vectors.data("certs/AppleRootCA-G3.cer"))
        #expect {
            try AppReceipt(berEncoded: certificate)
        } throws: { error in
            guard case .notAReceipt = error as? ReceiptParsingError else { return false }
            return true
        }
    }

    @Test("a receipt cut short is .truncated", arguments: [0.5, 0.9, 0.999])
    func truncatedReceipt(fraction: Double) throws {
        let bytes = Array(try Vectors.data("receipts/tpinappreceipt-receipt-production.b64").base64Decoded())
        let cut = Array(bytes.prefix(Int(Double(bytes.count) * fraction)))
        #expect(throws: ReceiptParsingError.truncated) { try AppReceipt(berEncoded: cut) }
    }

    @Test("an indefinite-length receipt cut short is .truncated")
    func truncatedIndefiniteLengthReceipt() throws {
        let bytes = Array(try Vectors.data("receipts/xcode-app-receipt-with-transaction.b64").base64Decoded())
        #expect(throws: ReceiptParsingError.truncated) { try AppReceipt(berEncoded: Array(bytes.prefix(300))) }
    }

    @Test("a PKCS#7 whose content is not a SET of attributes is .unexpectedStructure")
    func wrongPayloadStructure() throws {
        // ContentInfo(signedData) whose eContent is an OCTET STRING holding an INTEGER.
        func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag, UInt8(content.count)] + content }
        let dataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
        let signedDataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        let encap = tlv(0x30, tlv(0x06, dataOID) + tlv(0xA0, tlv(0x04, [0x02, 0x01, 0x05])))
        let signedData = tlv(0x30, tlv(0x02, [0x01]) + tlv(0x31, []) + encap + tlv(0x31, []))
        let contentInfo = tlv(0x30, tlv(0x06, signedDataOID) + tlv(0xA0, signedData))
        #expect {
            try AppReceipt(berEncoded: contentInfo)
        } throws: { error in
            guard case .unexpectedStructure(let reason) = error as? ReceiptParsingError else { return false }
            return reason.contains("not a SET")
        }
    }

    @Test("an attribute with the wrong value type is .malformedAttribute naming the attribute")
    func malformedAttribute() throws {
        let purchase = AppReceipt.InAppPurchase(otherAttributes: [.init(type: 1704, value: [0x02, 0x01, 0x01])])
        #expect(throws: ReceiptParsingError.malformedAttribute(type: 1704, reason: "expected a string, found INTEGER")) {
            try AppReceipt.InAppPurchase(berEncoded: purchase.derEncoded()[...])
        }
        let badDate = AppReceipt.InAppPurchase(otherAttributes: [.init(type: 1704, value: [0x16, 0x03] + Array("now".utf8))])
        #expect {
            try AppReceipt.InAppPurchase(berEncoded: badDate.derEncoded()[...])
        } throws: { error in
            guard case .malformedAttribute(1704, _) = error as? ReceiptParsingError else { return false }
            return true
        }
    }

    @Test("random bytes never crash the parser")
    func randomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for length in [1, 2, 3, 7, 64, 1000] {
            for _ in 0..<200 {
                var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                bytes[0] = [0x30, 0x31, 0x04, 0x24, 0xA0][Int.random(in: 0..<5, using: &generator)]
                _ = try? AppReceipt(berEncoded: bytes)
                _ = try? Receipt(base64Encoded: Self.base64(bytes))
            }
        }
    }

    @Test("mutating any byte of a real receipt never crashes the parser")
    func mutatedReceiptsNeverCrash() throws {
        let bytes = Array(try Vectors.data("receipts/xcode-app-receipt-with-transaction.b64").base64Decoded())
        for index in bytes.indices {
            for value: UInt8 in [0x00, 0x80, 0xFF] {
                var mutated = bytes
                mutated[index] = value
                _ = try? AppReceipt(berEncoded: mutated)
            }
        }
    }
}

@Suite("iOS 6 transaction receipts")
struct TransactionReceiptTests {
    @Test("the real sandbox iOS 6 receipt is recognised and its purchase-info decoded")
    func realTransactionReceipt() throws {
        let receipt = try Receipt(base64Encoded: Vectors.text("receipts/itunes-iap-ios6-transaction-receipt.b64"))
        guard case .transaction(let transaction) = receipt else {
            Issue.record("expected an iOS 6 transaction receipt, got \(receipt)")
            return
        }
        #expect(transaction.transactionId == "1000000046178817")
        #expect(transaction.originalTransactionId == "1000000046178817")
        #expect(transaction.productId == "com.mindmobapp.download")
        #expect(transaction.bundleId == "com.mindmobapp.MindMob")
        #expect(transaction.bundleVersion == "20120427")
        #expect(transaction.quantity == 1)
        #expect(transaction.purchaseDate == Date(timeIntervalSince1970: 1_335_798_355.868))
        #expect(transaction.environment == "Sandbox")
        #expect(transaction.purchaseInfo["item-id"] == "521129812")
    }

    @Test("Apple's minimal mock gives transaction id 33993399")
    func appleMockTransactionReceipt() throws {
        let receipt = try TransactionReceipt(base64Encoded: Vectors.text("receipts/apple-mock-legacyTransaction.b64"))
        #expect(receipt.transactionId == "33993399")
        #expect(receipt.environment == nil)
    }

    @Test("a property list without purchase-info is not a receipt")
    func plistWithoutPurchaseInfo() {
        let text = Data("{ \"signature\" = \"abc\"; }".utf8).base64EncodedString()
        #expect(throws: ReceiptParsingError.notAReceipt("property list has no purchase-info")) {
            try Receipt(base64Encoded: text)
        }
    }

    @Test("purchase-info without a transaction id is refused")
    func purchaseInfoWithoutTransactionId() {
        let info = Data("{ \"product-id\" = \"x\"; }".utf8).base64EncodedString()
        let text = Data("{ \"purchase-info\" = \"\(info)\"; }".utf8).base64EncodedString()
        #expect(throws: ReceiptParsingError.unexpectedStructure("purchase-info has no transaction-id")) {
            try Receipt(base64Encoded: text)
        }
    }

    @Test("a PKCS#7 upload is recognised as an app receipt")
    func appReceiptIsRecognised() throws {
        let receipt = try Receipt(base64Encoded: Vectors.text("receipts/xcode-app-receipt-with-transaction.b64"))
        guard case .app(let app) = receipt else {
            Issue.record("expected an app receipt")
            return
        }
        #expect(app.inAppPurchases.first?.transactionId == "0")
    }
}

extension Data {
    /// Decodes a base64 text file's contents.
    func base64Decoded() throws -> Data {
        let text = String(decoding: self, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = Data(base64Encoded: text) else { throw CocoaError(.fileReadCorruptFile) }
        return data
    }
}
