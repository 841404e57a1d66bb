import Postgres

/// How an upload was verified (`upload_verifications.method`).
public struct VerificationMethod: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    /// Apple's verifyReceipt endpoint.
    public static let verifyReceipt = VerificationMethod(rawValue: "verify_receipt")
    /// Offline, by the receipt's PKCS#7 signature chain (`RECONCILE_RECEIPT_VERIFICATION=local`).
    public static let localReceipt = VerificationMethod(rawValue: "local_receipt")
    /// A StoreKit 2 JWS, verified locally.
    public static let jws = VerificationMethod(rawValue: "jws")
    /// A Google Play purchase whose signature verified under its package's licence key.
    public static let playSignature = VerificationMethod(rawValue: "play_signature")
    /// A Google Play purchase whose signature verified and whose state the Play Developer API gave.
    public static let playAPI = VerificationMethod(rawValue: "play_api")
}
