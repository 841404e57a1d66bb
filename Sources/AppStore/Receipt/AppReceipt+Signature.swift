import Crypto
import Foundation
import SwiftASN1
// Validity is checked at the data's own signing time, as Apple's libraries do offline.
@_spi(FixedExpiryValidationTime) import X509

/// Why an app receipt's signature or certificate chain was not accepted.
public enum ReceiptSignatureFailure: Error, Hashable, Sendable {
    /// The receipt has no creation date (attribute 12), so there is no time to check the chain at.
    case missingCreationDate
    /// The SignedData does not have exactly one signer.
    case signerCount(Int)
    /// No embedded certificate matches the signer identifier.
    case signingCertificateNotFound
    /// An embedded certificate could not be parsed.
    case malformedCertificate(String)
    /// The digest or signature algorithm is not one App Store receipts use.
    case unsupportedAlgorithm(String)
    /// The signed attributes' message digest does not match the content.
    case digestMismatch
    /// The signature does not verify with the signing certificate's key.
    case badSignature
    /// The signing certificate does not chain to a trusted root at the validation time (or the
    /// chain lacks Apple's marker extensions).
    case untrustedChain(String)
}

/// The outcome of checking a receipt's signature: a value, not a thrown error, because an
/// invalid receipt is an ordinary finding for the reconciler.
public enum ReceiptSignatureResult: Sendable, Hashable {
    /// Signed by `signer`, whose chain ends in a trusted root.
    case valid(signer: Certificate)
    /// Not acceptable, and why.
    case invalid(ReceiptSignatureFailure)
}

extension AppReceipt {
    /// Verifies the CMS signature and the signer's chain to `trustRoots`.
    ///
    /// - Parameters:
    ///   - trustRoots: anchors; Apple Inc. Root for real receipts, the StoreKit test certificate
    ///     for Xcode receipts.
    ///   - validationTime: when the chain must have been valid; defaults to the receipt's
    ///     creation date, as Apple's signing certificates expire long before receipts stop
    ///     mattering.
    ///   - requireAppleExtensions: demand Apple's receipt-signing and WWDR marker extensions on
    ///     leaf and intermediate. Xcode's self-signed StoreKit certificate has neither.
    public func verifySignature(
        trustRoots: TrustedRoots = .apple,
        at validationTime: Date? = nil,
        requireAppleExtensions: Bool = true
    ) async -> ReceiptSignatureResult {
        guard let time = validationTime ?? payload.creationDate else { return .invalid(.missingCreationDate) }
        guard signerInfos.count == 1, let signer = signerInfos.first else {
            return .invalid(.signerCount(signerInfos.count))
        }

        let embedded: [Certificate]
        do {
            embedded = try certificates.map { try Certificate(derEncoded: $0) }
        } catch {
            return .invalid(.malformedCertificate(String(describing: error)))
        }
        guard let signingCertificate = embedded.first(where: { signer.identifies($0) }) else {
            return .invalid(.signingCertificateNotFound)
        }

        if let failure = Self.checkSignature(signer, content: signedContent, certificate: signingCertificate) {
            return .invalid(failure)
        }

        var verifier = Verifier(rootCertificates: CertificateStore(trustRoots.certificates)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            if requireAppleExtensions {
                AppleMarkerExtensionsPolicy()
            } else {
                StoreKitTestCertificatePolicy()
            }
        }
        let result = await verifier.validate(leaf: signingCertificate, intermediates: CertificateStore(embedded))
        switch result {
        case .validCertificate:
            return .valid(signer: signingCertificate)
        case .couldNotValidate(let failures):
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            return .invalid(.untrustedChain(reasons.isEmpty ? "no path to a trusted root" : reasons.joined(separator: "; ")))
        }
    }

    // swift-certificates' CMS verifier (`CMS.isValidAttachedSignature`) rejects every real App
    // Store receipt: Apple names the signature algorithm `rsaEncryption` (1.2.840.113549.1.1.1)
    // with the hash in the separate digest algorithm (SHA-1 on receipts before ~2023, SHA-256
    // after), and that library only accepts combined identifiers such as sha256WithRSAEncryption.
    // So the SignerInfo is checked here, still through swift-certificates' public-key API
    // (PKCS#1 v1.5 with SHA-1 or SHA-2), and the chain through its `Verifier`.
    private static func checkSignature(
        _ signer: SignerInfo,
        content: [UInt8],
        certificate: Certificate
    ) -> ReceiptSignatureFailure? {
        guard let digest = DigestAlgorithm(oid: signer.digestAlgorithm) else {
            return .unsupportedAlgorithm("digest \(signer.digestAlgorithm)")
        }
        guard let algorithm = digest.signatureAlgorithm(for: signer.signatureAlgorithm) else {
            return .unsupportedAlgorithm("signature \(signer.signatureAlgorithm) with digest \(signer.digestAlgorithm)")
        }

        var signedBytes = content
        if var attributes = signer.signedAttributes {
            // RFC 5652 §5.4: the signature covers the DER of the attributes with a SET tag, not
            // the [0] IMPLICIT tag they are stored under.
            guard let messageDigest = Self.messageDigest(in: attributes) else {
                return .unsupportedAlgorithm("signed attributes without a message digest")
            }
            guard messageDigest == digest.hash(content) else { return .digestMismatch }
            attributes[0] = 0x31
            signedBytes = attributes
        }
        guard certificate.publicKey.isValidSignature(signer.signature, for: signedBytes, signatureAlgorithm: algorithm)
        else {
            return .badSignature
        }
        return nil
    }

    private static func messageDigest(in signedAttributes: [UInt8]) -> [UInt8]? {
        let messageDigestOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 4]
        guard let root = try? BER.parse(signedAttributes), case .constructed(let attributes) = root.content else {
            return nil
        }
        for attribute in attributes {
            guard case .constructed(let parts) = attribute.content else { continue }
            var iterator = parts.makeIterator()
            guard let typeNode = iterator.next(), (try? ASN1ObjectIdentifier(berEncoded: typeNode)) == messageDigestOID,
                let values = iterator.next(), case .constructed(let valueNodes) = values.content,
                let value = valueNodes.first(where: { _ in true }),
                let octets = try? ASN1OctetString(berEncoded: value)
            else { continue }
            return Array(octets.bytes)
        }
        return nil
    }
}

extension SignerInfo {
    func identifies(_ certificate: Certificate) -> Bool {
        switch identifier {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            guard let node = try? DER.parse(issuer), let name = try? DistinguishedName(derEncoded: node) else {
                return false
            }
            return name == certificate.issuer && Certificate.SerialNumber(bytes: serialNumber) == certificate.serialNumber
        case .subjectKeyIdentifier(let keyIdentifier):
            guard let extensionValue = try? certificate.extensions.subjectKeyIdentifier else { return false }
            return Array(extensionValue.keyIdentifier) == keyIdentifier
        }
    }
}

/// The digest algorithms CMS receipts use, and how each pairs with a signature algorithm.
private enum DigestAlgorithm {
    case sha1, sha256, sha384, sha512

    init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case [1, 3, 14, 3, 2, 26]: self = .sha1
        case [2, 16, 840, 1, 101, 3, 4, 2, 1]: self = .sha256
        case [2, 16, 840, 1, 101, 3, 4, 2, 2]: self = .sha384
        case [2, 16, 840, 1, 101, 3, 4, 2, 3]: self = .sha512
        default: return nil
        }
    }

    func hash(_ bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .sha1: Array(Insecure.SHA1.hash(data: bytes))
        case .sha256: Array(SHA256.hash(data: bytes))
        case .sha384: Array(SHA384.hash(data: bytes))
        case .sha512: Array(SHA512.hash(data: bytes))
        }
    }

    /// The combined algorithm for a SignerInfo's signatureAlgorithm; `nil` when they disagree.
    func signatureAlgorithm(for oid: ASN1ObjectIdentifier) -> Certificate.SignatureAlgorithm? {
        let rsa: Certificate.SignatureAlgorithm
        let ecdsa: Certificate.SignatureAlgorithm?
        switch self {
        case .sha1: (rsa, ecdsa) = (.sha1WithRSAEncryption, nil)
        case .sha256: (rsa, ecdsa) = (.sha256WithRSAEncryption, .ecdsaWithSHA256)
        case .sha384: (rsa, ecdsa) = (.sha384WithRSAEncryption, .ecdsaWithSHA384)
        case .sha512: (rsa, ecdsa) = (.sha512WithRSAEncryption, .ecdsaWithSHA512)
        }
        switch oid {
        case [1, 2, 840, 113_549, 1, 1, 1]: return rsa  // rsaEncryption: the hash comes from the digest algorithm
        case [1, 2, 840, 113_549, 1, 1, 5]: return self == .sha1 ? rsa : nil
        case [1, 2, 840, 113_549, 1, 1, 11]: return self == .sha256 ? rsa : nil
        case [1, 2, 840, 113_549, 1, 1, 12]: return self == .sha384 ? rsa : nil
        case [1, 2, 840, 113_549, 1, 1, 13]: return self == .sha512 ? rsa : nil
        case [1, 2, 840, 10045, 4, 3, 2]: return self == .sha256 ? ecdsa : nil
        case [1, 2, 840, 10045, 4, 3, 3]: return self == .sha384 ? ecdsa : nil
        case [1, 2, 840, 10045, 4, 3, 4]: return self == .sha512 ? ecdsa : nil
        default: return nil
        }
    }
}
