/// Any StoreKit 1 receipt a client may upload as `app_receipt`.
public enum Receipt: Sendable, Hashable {
    /// A PKCS#7 app receipt (iOS 7 and later).
    case app(AppReceipt)
    /// An iOS 6 style transaction receipt (an old-style property list).
    case transaction(TransactionReceipt)

    /// Recognises and decodes a base64 upload; throws when it is neither kind of receipt.
    public init(base64Encoded text: String) throws(ReceiptParsingError) {
        let bytes = try ReceiptBase64.decode(text, limit: AppReceipt.maximumSize)
        switch bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
        case UInt8(ascii: "{"):
            self = .transaction(try TransactionReceipt(plist: bytes))
        case 0x30:
            self = .app(try AppReceipt(berEncoded: bytes))
        case nil:
            throw .empty
        case let first?:
            throw .notAReceipt("starts with byte 0x\(String(first, radix: 16)), neither PKCS#7 nor a property list")
        }
    }
}
