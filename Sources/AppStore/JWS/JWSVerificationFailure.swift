/// Why a signed App Store payload was rejected: one case per rule of SPEC §3.
public enum JWSVerificationFailure: Error, Hashable, Sendable {
    /// The token is larger than any App Store JWS.
    case tooLarge(size: Int, limit: Int)
    /// Not three base64url segments with a JSON header.
    case malformed(String)
    /// The header's `alg` is not `ES256` (`none`, `HS256`, missing…).
    case unsupportedAlgorithm(String)
    /// The header has no `x5c` certificate chain.
    case missingCertificateChain
    /// `x5c` does not hold exactly three certificates.
    case wrongCertificateCount(Int)
    /// An `x5c` entry is not a DER certificate.
    case malformedCertificate(String)
    /// The leaf lacks Apple's App Store receipt-signing OID 1.2.840.113635.100.6.11.1.
    case leafMissingAppleOID
    /// The intermediate lacks Apple's WWDR OID 1.2.840.113635.100.6.2.1.
    case intermediateMissingAppleOID
    /// No valid path from leaf and intermediate to a trusted root at the validation time.
    case untrustedChain(String)
    /// The ES256 signature does not verify with the leaf's key.
    case invalidSignature
    /// The payload is not JSON of the expected type.
    case undecodablePayload(String)
    /// The payload's bundle id is not one the configuration accepts.
    case bundleIdNotAccepted(String?)
    /// The payload's `appAppleId` differs from the configured one.
    case appAppleIdMismatch(Int64?)
    /// The payload's environment is not accepted (`Xcode` and `LocalTesting` never are).
    case environmentNotAccepted(String?)
    /// A JWS nested in a notification (`signedTransactionInfo`, `signedRenewalInfo`) failed.
    indirect case nested(field: String, JWSVerificationFailure)
}

extension JWSVerificationFailure: CustomStringConvertible {
    /// A one-line reason for logs, the review queue and `reconcile inspect`.
    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): "JWS too large (\(size) bytes, limit \(limit))"
        case .malformed(let reason): "malformed JWS: \(reason)"
        case .unsupportedAlgorithm(let alg): "unsupported JWS algorithm \"\(alg)\" (only ES256 is accepted)"
        case .missingCertificateChain: "JWS header has no x5c certificate chain"
        case .wrongCertificateCount(let count): "x5c holds \(count) certificates, expected 3"
        case .malformedCertificate(let reason): "x5c certificate unreadable: \(reason)"
        case .leafMissingAppleOID: "leaf certificate lacks Apple OID 1.2.840.113635.100.6.11.1"
        case .intermediateMissingAppleOID: "intermediate certificate lacks Apple OID 1.2.840.113635.100.6.2.1"
        case .untrustedChain(let reason): "certificate chain not trusted: \(reason)"
        case .invalidSignature: "ES256 signature does not verify"
        case .undecodablePayload(let reason): "payload undecodable: \(reason)"
        case .bundleIdNotAccepted(let bundleId): "bundle id \(bundleId ?? "(none)") not accepted"
        case .appAppleIdMismatch(let id): "appAppleId \(id.map(String.init) ?? "(none)") does not match"
        case .environmentNotAccepted(let environment): "environment \(environment ?? "(none)") not accepted"
        case .nested(let field, let failure): "\(field): \(failure)"
        }
    }
}

/// The outcome of verifying a signed App Store payload.
public enum JWSVerificationResult<Payload: Sendable>: Sendable {
    /// Signed by Apple (per the configured roots) and acceptable; here is the payload.
    case valid(Payload)
    /// Rejected, and why.
    case invalid(JWSVerificationFailure)

    /// The payload when valid.
    public var payload: Payload? {
        if case .valid(let payload) = self { payload } else { nil }
    }

    /// The failure when invalid.
    public var failure: JWSVerificationFailure? {
        if case .invalid(let failure) = self { failure } else { nil }
    }
}

extension JWSVerificationResult: Equatable where Payload: Equatable {}
extension JWSVerificationResult: Hashable where Payload: Hashable {}
