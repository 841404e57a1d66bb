/// Why a base64 upload could not be read as an App Store receipt.
///
/// Each case names one way the input is wrong, so that the job can record *why* an upload was
/// rejected without asking Apple (SPEC §3: "not base64, or neither PKCS#7 nor an iOS 6 style
/// transaction receipt, is `invalid`").
public enum ReceiptParsingError: Error, Hashable, Sendable {
    /// The input was empty (or only whitespace).
    case empty
    /// The input is larger than the parser accepts; real receipts stay far below the limit.
    case tooLarge(size: Int, limit: Int)
    /// The input is not standard base64.
    case notBase64
    /// The bytes are neither a PKCS#7 (CMS) structure nor an iOS 6 transaction receipt.
    case notAReceipt(String)
    /// The ASN.1 data ends before a length it announced.
    case truncated
    /// The PKCS#7 container is readable but not shaped like an App Store receipt.
    case unexpectedStructure(String)
    /// One receipt attribute holds a value of the wrong type or format.
    case malformedAttribute(type: Int, reason: String)
}

extension ReceiptParsingError: CustomStringConvertible {
    /// A one-line explanation for logs and `reconcile inspect`.
    public var description: String {
        switch self {
        case .empty: "empty receipt"
        case .tooLarge(let size, let limit): "receipt too large (\(size) bytes, limit \(limit))"
        case .notBase64: "receipt is not base64"
        case .notAReceipt(let reason): "not a receipt: \(reason)"
        case .truncated: "receipt is truncated"
        case .unexpectedStructure(let reason): "unexpected receipt structure: \(reason)"
        case .malformedAttribute(let type, let reason): "malformed receipt attribute \(type): \(reason)"
        }
    }
}
