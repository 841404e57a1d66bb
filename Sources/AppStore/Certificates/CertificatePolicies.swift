import SwiftASN1
import X509

/// Apple's marker extensions: a leaf must carry 1.2.840.113635.100.6.11.1 (App Store receipt
/// signing) and the intermediate 1.2.840.113635.100.6.2.1 (Apple WWDR CA).
///
/// Without this check any certificate that chains to an Apple root — every developer's signing
/// certificate does, through WWDR — could sign receipts and transactions the job would believe.
struct AppleMarkerExtensionsPolicy: VerifierPolicy {
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]

    // The markers are non-critical; a chain marking them critical still verifies because the
    // policy enforces them.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.leafOID, Self.intermediateOID]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        // leaf → intermediate → root: a leaf signed directly by a root is not an App Store chain.
        guard chain.count >= 3 else {
            return .failsToMeetPolicy(reason: "chain has \(chain.count) certificates, expected leaf, intermediate and root")
        }
        guard chain[0].extensions[oid: Self.leafOID] != nil else {
            return .failsToMeetPolicy(reason: "leaf lacks Apple OID 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions[oid: Self.intermediateOID] != nil else {
            return .failsToMeetPolicy(reason: "intermediate lacks Apple OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}

/// For chains without Apple's markers (Xcode's self-signed "StoreKit" certificate): that
/// certificate marks its extended key usage critical, which a verifier must understand or
/// refuse. Understood here as "code signing", the only usage a receipt signer may claim.
struct StoreKitTestCertificatePolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.extendedKeyUsage]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard let usage = try? chain.leaf.extensions.extendedKeyUsage else {
            if chain.leaf.extensions[oid: .X509ExtensionID.extendedKeyUsage] == nil { return .meetsPolicy }
            return .failsToMeetPolicy(reason: "leaf extended key usage is unreadable")
        }
        guard usage.contains(.codeSigning) else {
            return .failsToMeetPolicy(reason: "leaf extended key usage does not allow code signing")
        }
        return .meetsPolicy
    }
}
