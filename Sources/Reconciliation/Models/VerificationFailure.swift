import AppStore
import Postgres

/// Why an upload was judged invalid (`upload_verifications.error_code`, the report's breakdown):
/// one code per rule, written in one place for the uploads' verifier and the queue. Extensible
/// like the AppStore models: a code written by a newer build is kept as it is.
public struct VerificationFailure: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    /// The upload's kind is neither an app receipt nor a signed transaction.
    public static let unknownKind = VerificationFailure(rawValue: "unknown_kind")
    /// A verified JWS transaction without its id, product or dates.
    public static let jwsIncomplete = VerificationFailure(rawValue: "jws_incomplete")
    /// A genuine transaction of an app not in `RECONCILE_BUNDLE_IDS`.
    public static let foreignBundle = VerificationFailure(rawValue: "foreign_bundle")
    /// verifyReceipt answered that it is not a receipt, without a status.
    public static let notAReceipt = VerificationFailure(rawValue: "not_a_receipt")
    /// An app receipt that cannot be parsed offline.
    public static let receiptUnreadable = VerificationFailure(rawValue: "receipt_unreadable")
    /// An iOS 6 transaction receipt, which only verifyReceipt can verify.
    public static let ios6ReceiptOffline = VerificationFailure(rawValue: "ios6_receipt_offline")
    /// An app receipt whose PKCS#7 signature chain does not verify.
    public static let receiptSignature = VerificationFailure(rawValue: "receipt_signature")
    /// An app receipt of an environment that is not real money (Xcode).
    public static let receiptEnvironment = VerificationFailure(rawValue: "receipt_environment")
    /// An app receipt without a bundle id.
    public static let receiptIncomplete = VerificationFailure(rawValue: "receipt_incomplete")
    /// Apple's data holds a NUL character, which PostgreSQL text cannot store.
    public static let nulCharacter = VerificationFailure(rawValue: "nul_character")
    /// verifyReceipt's `21002` persisted through every attempt: the receipt is malformed.
    public static let persistent21002 = VerificationFailure(rawValue: "persistent_21002")
    /// The code stored with a verdict to retry (not a failure for good).
    public static let retry = VerificationFailure(rawValue: "retry")
    /// An upload of a store the settings leave off (a `play_purchase` without `GOOGLE_PLAY_PACKAGE_NAMES`).
    public static let storeNotConfigured = VerificationFailure(rawValue: "store_not_configured")
    /// A Play purchase whose signature verifies, but whose token Google does not know (404).
    public static let playTokenUnknown = VerificationFailure(rawValue: "play_token_unknown")

    /// verifyReceipt refused the receipt with `status`.
    public static func apple(status: Int) -> VerificationFailure { VerificationFailure(rawValue: "apple_\(status)") }

    /// The code of a JWS verification failure (SPEC section 3's rules, one code each).
    public init(_ failure: JWSVerificationFailure) {
        switch failure {
        case .tooLarge: self = "jws_too_large"
        case .malformed: self = "jws_malformed"
        case .unsupportedAlgorithm: self = "jws_unsupported_algorithm"
        case .missingCertificateChain: self = "jws_missing_x5c"
        case .wrongCertificateCount: self = "jws_x5c_count"
        case .malformedCertificate: self = "jws_bad_certificate"
        case .leafMissingAppleOID: self = "jws_leaf_oid"
        case .intermediateMissingAppleOID: self = "jws_intermediate_oid"
        case .untrustedChain: self = "jws_untrusted_chain"
        case .invalidSignature: self = "jws_bad_signature"
        case .undecodablePayload: self = "jws_undecodable_payload"
        case .bundleIdNotAccepted: self = .foreignBundle
        case .appAppleIdMismatch: self = "jws_app_apple_id"
        case .environmentNotAccepted: self = "jws_environment"
        case .nested(_, let inner): self.init(inner)
        }
    }
}
