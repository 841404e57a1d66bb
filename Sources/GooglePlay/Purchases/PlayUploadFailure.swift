/// Why a `play_purchase` upload was refused (SPEC section 18): a value, never a crash. Each case
/// has a stable ``code`` for reports and the database, and a ``description`` for people.
public enum PlayUploadFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The payload is larger than ``PlayPurchaseUpload/maximumPayloadBytes``.
    case payloadTooLarge(bytes: Int)
    /// A NUL character, raw or escaped, anywhere in the payload or in `purchaseData`.
    case nulCharacter
    /// The payload is not JSON text.
    case payloadNotJSON
    /// The payload is JSON, but not an object.
    case payloadNotObject
    /// An object of the payload or of `purchaseData` gives this member twice.
    case repeatedMember(String)
    /// `purchaseData` or `signature` is absent.
    case missingMember(String)
    /// `purchaseData` or `signature` is not a JSON string.
    case memberNotString(String)
    /// `signature` is not base64.
    case signatureNotBase64
    /// `purchaseData` is not the text of a JSON object.
    case purchaseDataNotObject
    /// `purchaseData` lacks a field every purchase has (`packageName`, `productId`, `purchaseToken`, `purchaseTime`).
    case purchaseDataMissingField(String)
    /// A field of `purchaseData` has the wrong type (`purchaseTime` not an integer, …).
    case purchaseDataInvalidField(String)
    /// No licence key is configured for the package `purchaseData` names (`GOOGLE_PLAY_LICENSE_KEYS`).
    case packageWithoutKey(String)
    /// The signature does not verify under the package's licence key over `purchaseData`'s exact bytes.
    case signatureMismatch

    /// A stable snake_case code.
    public var code: String {
        switch self {
        case .payloadTooLarge: "payload_too_large"
        case .nulCharacter: "nul_character"
        case .payloadNotJSON: "payload_not_json"
        case .payloadNotObject: "payload_not_object"
        case .repeatedMember: "repeated_member"
        case .missingMember: "missing_member"
        case .memberNotString: "member_not_string"
        case .signatureNotBase64: "signature_not_base64"
        case .purchaseDataNotObject: "purchase_data_not_object"
        case .purchaseDataMissingField: "purchase_data_missing_field"
        case .purchaseDataInvalidField: "purchase_data_invalid_field"
        case .packageWithoutKey: "package_without_key"
        case .signatureMismatch: "signature_mismatch"
        }
    }

    /// One English sentence naming what is wrong; names quoted from the upload are cut to 64 characters.
    public var description: String {
        func quoted(_ name: String) -> String { String(reflecting: String(name.unicodeScalars.prefix(64))) }
        return switch self {
        case .payloadTooLarge(let bytes):
            "the payload is \(bytes) bytes, over the \(PlayPurchaseUpload.maximumPayloadBytes)-byte limit"
        case .nulCharacter: "the payload contains a NUL character"
        case .payloadNotJSON: "the payload is not JSON"
        case .payloadNotObject: "the payload is not a JSON object"
        case .repeatedMember(let name): "the payload gives the member \(quoted(name)) twice"
        case .missingMember(let name): "the payload has no \(quoted(name))"
        case .memberNotString(let name): "the payload's \(quoted(name)) is not a string"
        case .signatureNotBase64: "the signature is not base64"
        case .purchaseDataNotObject: "purchaseData is not a JSON object"
        case .purchaseDataMissingField(let name): "purchaseData has no \(quoted(name))"
        case .purchaseDataInvalidField(let name): "purchaseData's \(quoted(name)) has the wrong type"
        case .packageWithoutKey(let name): "no licence key is configured for the package \(quoted(name))"
        case .signatureMismatch: "the signature does not verify over purchaseData under the package's licence key"
        }
    }
}
