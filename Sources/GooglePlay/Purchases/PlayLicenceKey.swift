import Crypto
import Foundation
import SwiftASN1
import _CryptoExtras

/// An app's Google Play licence key (Play Console → Monetization setup): a base64 X.509
/// SubjectPublicKeyInfo holding an RSA public key, which verifies the app's purchase signatures.
public struct PlayLicenceKey: Sendable {
    /// The smallest key accepted.
    ///
    /// Play Console hands out RSA-2048 keys, and swift-crypto's usual initialiser refuses anything
    /// smaller. Keys of apps from the first years of in-app billing, and go-iap's real test vector,
    /// are RSA-1024; the key only checks signatures Google made, so the unsafe initialiser (which
    /// allows 1024 bits and up) is used, and nothing below 1024 bits is taken.
    public static let minimumBits = 1024

    /// The RSA public key.
    public let publicKey: _RSA.Signing.PublicKey

    /// Reads the base64 text Play Console shows (whitespace and line breaks ignored).
    public init(base64 text: String) throws(PlayLicenceKeyError.Reason) {
        let compact = text.filter { !$0.isWhitespace }
        guard let der = Data(base64Encoded: compact), !der.isEmpty else { throw .notBase64 }
        // Checked as DER first: swift-crypto was seen to abort, now and then, on a few bytes that
        // are not DER at all (`YWJjZA==`), where it should throw.
        guard let node = try? DER.parse(Array(der)), node.identifier == .sequence else { throw .notRSAPublicKey }
        let key: _RSA.Signing.PublicKey
        do {
            key = try _RSA.Signing.PublicKey(unsafeDERRepresentation: der)
        } catch {
            // swift-crypto refuses a smaller key with the same error as a malformed one; tell them apart.
            throw .notRSAPublicKey
        }
        guard key.keySizeInBits >= Self.minimumBits else { throw .tooSmall(bits: key.keySizeInBits) }
        publicKey = key
    }

    /// Whether `signature` is Google's RSA PKCS#1 v1.5 signature over the SHA-1 of `data`.
    public func isValidSignature(_ signature: Data, for data: some DataProtocol) -> Bool {
        publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: Insecure.SHA1.hash(data: data),
            padding: .insecurePKCS1v1_5)
    }
}
