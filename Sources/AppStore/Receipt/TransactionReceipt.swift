import Foundation

/// An iOS 6 style transaction receipt (`SKPaymentTransaction.transactionReceipt`, deprecated in
/// iOS 7): base64 of an old-style property list whose `purchase-info` is itself a base64 plist.
///
/// Only verifyReceipt can vouch for it; it is decoded so the job can tell "an iOS 6 receipt"
/// from "not a receipt" and knows which transaction the upload claims.
public struct TransactionReceipt: Sendable, Hashable {
    /// The outer dictionary (`signature`, `purchase-info`, `environment`, `pod`, `signing-status`).
    public var fields: [String: String]
    /// The decoded `purchase-info` dictionary, keys as Apple writes them (`transaction-id`, `bid`…).
    public var purchaseInfo: [String: String]

    /// `transaction-id`; always present (a receipt without one is rejected).
    public let transactionId: String
    /// `original-transaction-id`.
    public var originalTransactionId: String? { purchaseInfo["original-transaction-id"] }
    /// `product-id`.
    public var productId: String? { purchaseInfo["product-id"] }
    /// `bid`: the app's bundle identifier.
    public var bundleId: String? { purchaseInfo["bid"] }
    /// `bvrs`: the app's bundle version.
    public var bundleVersion: String? { purchaseInfo["bvrs"] }
    /// `quantity`.
    public var quantity: Int? { purchaseInfo["quantity"].flatMap { Int($0) } }
    /// `purchase-date-ms`.
    public var purchaseDate: Date? { Self.milliseconds(purchaseInfo["purchase-date-ms"]) }
    /// `original-purchase-date-ms`.
    public var originalPurchaseDate: Date? { Self.milliseconds(purchaseInfo["original-purchase-date-ms"]) }
    /// The outer `environment` (`Sandbox`; production receipts omit it).
    public var environment: String? { fields["environment"] }

    /// Decodes the base64 upload.
    public init(base64Encoded text: String) throws(ReceiptParsingError) {
        try self.init(plist: ReceiptBase64.decode(text, limit: AppReceipt.maximumSize))
    }

    /// Decodes the property-list bytes (after base64).
    public init(plist bytes: [UInt8]) throws(ReceiptParsingError) {
        guard let outer = OldStylePlist.parseStringDictionary(bytes) else {
            throw .notAReceipt("not an old-style property list")
        }
        guard let encodedInfo = outer["purchase-info"] else {
            throw .notAReceipt("property list has no purchase-info")
        }
        let infoBytes: [UInt8]
        do {
            infoBytes = try ReceiptBase64.decode(encodedInfo, limit: AppReceipt.maximumSize)
        } catch {
            throw .unexpectedStructure("purchase-info is not base64")
        }
        guard let info = OldStylePlist.parseStringDictionary(infoBytes) else {
            throw .unexpectedStructure("purchase-info is not a property list")
        }
        guard let transactionId = info["transaction-id"], !transactionId.isEmpty else {
            throw .unexpectedStructure("purchase-info has no transaction-id")
        }
        self.transactionId = transactionId
        self.fields = outer
        self.purchaseInfo = info
    }

    private static func milliseconds(_ text: String?) -> Date? {
        guard let text, let value = Int64(text) else { return nil }
        return Date(timeIntervalSince1970: Double(value) / 1000)
    }
}

/// The NeXTSTEP/OpenStep text plist subset Apple used for transaction receipts: one dictionary
/// of string keys to string values, `{ "key" = "value"; … }`.
enum OldStylePlist {
    static func parseStringDictionary(_ bytes: [UInt8]) -> [String: String]? {
        var index = 0
        func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        func token() -> String? {
            skipWhitespace()
            guard index < bytes.count else { return nil }
            var out: [UInt8] = []
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count {
                        index += 1
                        switch bytes[index] {
                        case UInt8(ascii: "n"): out.append(0x0A)
                        case UInt8(ascii: "t"): out.append(0x09)
                        default: out.append(bytes[index])
                        }
                    } else {
                        out.append(bytes[index])
                    }
                    index += 1
                }
                guard index < bytes.count else { return nil }
                index += 1
            } else {
                while index < bytes.count, Self.isBareCharacter(bytes[index]) {
                    out.append(bytes[index])
                    index += 1
                }
                guard !out.isEmpty else { return nil }
            }
            return String(bytes: out, encoding: .utf8)
        }
        func expect(_ character: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }

        guard expect(UInt8(ascii: "{")) else { return nil }
        var dictionary: [String: String] = [:]
        while true {
            if expect(UInt8(ascii: "}")) { break }
            guard let key = token(), expect(UInt8(ascii: "=")), let value = token(), expect(UInt8(ascii: ";"))
            else { return nil }
            dictionary[key] = value
        }
        skipWhitespace()
        return index == bytes.count ? dictionary : nil
    }

    private static func isBareCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "/"), UInt8(ascii: "$"), UInt8(ascii: ":"):
            true
        default:
            false
        }
    }
}
