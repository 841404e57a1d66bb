import AppStore
import Foundation

/// The payload of a `play_purchase` upload: `{"purchaseData": "…", "signature": "…"}`, as the
/// Android client sends `Purchase.getOriginalJson()` and `Purchase.getSignature()`.
///
/// ``purchaseData`` is kept exactly as decoded from the payload: its UTF-8 bytes are what Google
/// signed, and a re-serialisation (spaces, another order of keys) no longer verifies.
public struct PlayPurchaseUpload: Hashable, Sendable {
    /// Larger payloads are refused before they are read: a real one is well under 2 KiB.
    public static let maximumPayloadBytes = 64 << 10

    /// The signed JSON text, unchanged.
    public let purchaseData: String
    /// The decoded signature bytes (RSA PKCS#1 v1.5 over SHA-1 of ``purchaseData``).
    public let signature: Data
    /// The fields of ``purchaseData``; not yet proven by the signature.
    public let purchase: PlayPurchaseData

    /// Parses a payload; every refusal is a precise ``PlayUploadFailure``.
    public init(payload: some Collection<UInt8>) throws(PlayUploadFailure) {
        guard payload.count <= Self.maximumPayloadBytes else { throw .payloadTooLarge(bytes: payload.count) }
        let value: PlayJSON.Value
        do {
            value = try PlayJSON.parse(payload)
        } catch {
            throw Self.failure(error, notJSON: .payloadNotJSON)
        }
        guard case .object(let members) = value else { throw .payloadNotObject }
        let purchaseData = try Self.string(members, "purchaseData")
        let signatureText = try Self.string(members, "signature")
        // Google's signature is standard base64 with padding; a line break from a client that
        // wrapped it is not part of it (trimmed by bytes: Foundation's trimming, through NSString
        // on Linux, was half of parsing an upload).
        guard let signature = Data(base64Encoded: signatureText.trimmingWhitespacesAndNewlines()), !signature.isEmpty
        else { throw .signatureNotBase64 }
        self.purchaseData = purchaseData
        self.signature = signature
        purchase = try PlayPurchaseData(json: purchaseData)
    }

    /// Parses a payload given as text.
    public init(payload: String) throws(PlayUploadFailure) {
        try self.init(payload: Array(payload.utf8))
    }

    private static func string(_ members: PlayJSON.Object, _ name: String) throws(PlayUploadFailure) -> String {
        guard let value = members[name] else { throw .missingMember(name) }
        guard let text = value.string else { throw .memberNotString(name) }
        return text
    }

    static func failure(_ failure: PlayJSON.Failure, notJSON: PlayUploadFailure) -> PlayUploadFailure {
        switch failure {
        case .malformed, .tooDeep: notJSON
        case .repeated(let name): .repeatedMember(name)
        case .nul: .nulCharacter
        }
    }
}
