import Foundation

/// Verifies `play_purchase` uploads locally (SPEC section 18): the payload is parsed, the key of
/// the package `purchaseData` names is looked up, and the signature is checked with RSA PKCS#1
/// v1.5 over the SHA-1 of `purchaseData`'s exact UTF-8 bytes.
///
/// The key is chosen by the package the signed text names, so a signature made with another
/// app's key never verifies. Whether the package is one the job accepts
/// (`GOOGLE_PLAY_PACKAGE_NAMES`, else `foreign_bundle`) is the caller's to judge.
public struct PlayPurchaseVerifier: Sendable {
    /// What one upload came to.
    public enum Verification: Hashable, Sendable {
        /// The signature verifies: Google issued this purchase.
        case valid(PlayPurchaseData)
        /// Refused, with the reason.
        case invalid(PlayUploadFailure)
    }

    /// The keys by package name.
    public let keys: PlayLicenceKeys

    public init(keys: PlayLicenceKeys) {
        self.keys = keys
    }

    /// Verifies an upload's payload.
    public func verify(payload: some Collection<UInt8>) -> Verification {
        let upload: PlayPurchaseUpload
        do {
            upload = try PlayPurchaseUpload(payload: payload)
        } catch {
            return .invalid(error)
        }
        return verify(upload)
    }

    /// Verifies an upload already parsed.
    public func verify(_ upload: PlayPurchaseUpload) -> Verification {
        guard let key = keys[upload.purchase.packageName] else {
            return .invalid(.packageWithoutKey(upload.purchase.packageName))
        }
        guard key.isValidSignature(upload.signature, for: Array(upload.purchaseData.utf8)) else {
            return .invalid(.signatureMismatch)
        }
        return .valid(upload.purchase)
    }

    /// The purchase of an upload whose package has no key of its own, when one of the configured
    /// keys verifies its signature: a purchase Google signed for an app the job holds the key of,
    /// naming another package (the caller's `foreign_bundle`). Nil when none verifies: a package
    /// without a key is still refused, never trusted.
    public func purchaseSignedByAnotherKey(_ upload: PlayPurchaseUpload) -> PlayPurchaseData? {
        guard keys[upload.purchase.packageName] == nil else { return nil }
        let signed = Array(upload.purchaseData.utf8)
        let verifies = keys.keys.values.contains { $0.isValidSignature(upload.signature, for: signed) }
        return verifies ? upload.purchase : nil
    }
}
