import Postgres

/// What a client uploaded (`uploads.kind`, SPEC section 3). Extensible like the AppStore models:
/// a kind this build does not know is kept as it is and judged `unknown_kind`.
public struct UploadKind: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    /// A StoreKit 1 app receipt (or an iOS 6 transaction receipt), base64.
    public static let appReceipt = UploadKind(rawValue: "app_receipt")
    /// A StoreKit 2 JWS transaction.
    public static let signedTransaction = UploadKind(rawValue: "signed_transaction")
    /// A Google Play purchase: `{"purchaseData": "<Purchase.getOriginalJson()>", "signature": "…"}`
    /// (SPEC section 18).
    public static let playPurchase = UploadKind(rawValue: "play_purchase")
}
