import Crypto
import Foundation
import Synchronization
// Validity is checked at the data's own signing time, as Apple's libraries do offline.
@_spi(FixedExpiryValidationTime) import X509

/// Verifies StoreKit 2 signed data (transactions, renewal info, notifications) offline, by the
/// rules of SPEC §3, the way Apple's `SignedDataVerifier` does with online checks off.
///
/// Safe to share between tasks. Verified chains are cached, so verifying thousands of JWS
/// signed by the same leaf costs one ECDSA check each.
public final class SignedDataVerifier: Sendable {
    /// When certificate validity is checked.
    public enum ValidationTime: Sendable, Hashable {
        /// At the payload's `signedDate` (now when it has none): old JWS keep verifying after
        /// the leaf expired, as with Apple's libraries when OCSP is off.
        case signedDate
        /// At the current time.
        case now
        /// At a fixed instant.
        case fixed(Date)
    }

    /// What the verifier trusts and accepts.
    public struct Configuration: Sendable {
        /// The anchors; Apple's bundled roots by default.
        public var trustedRoots: TrustedRoots
        /// Bundle ids whose data is accepted.
        public var bundleIds: Set<String>
        /// Environments accepted; `Xcode` and `LocalTesting` are refused even if listed.
        public var environments: Set<AppStoreEnvironment>
        /// When set, a notification's `appAppleId` must equal it (and a production one must carry it).
        public var appAppleId: Int64?
        /// When certificate validity is checked.
        public var validationTime: ValidationTime
        /// The largest token accepted, in bytes.
        public var maximumSize: Int

        /// Creates a configuration; by default Apple's roots, production and sandbox.
        public init(
            trustedRoots: TrustedRoots = .apple,
            bundleIds: Set<String>,
            environments: Set<AppStoreEnvironment> = [.production, .sandbox],
            appAppleId: Int64? = nil,
            validationTime: ValidationTime = .signedDate,
            maximumSize: Int = 1 << 20
        ) {
            self.trustedRoots = trustedRoots
            self.bundleIds = bundleIds
            self.environments = environments
            self.appAppleId = appAppleId
            self.validationTime = validationTime
            self.maximumSize = maximumSize
        }
    }

    /// The configuration this verifier applies.
    public let configuration: Configuration
    private let chainCache = ChainCache()

    /// Creates a verifier.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// How many verified chains are cached (for tests and metrics).
    public var cachedChainCount: Int { chainCache.count }

    /// Verifies and decodes a signed transaction (`signedTransactionInfo`, a StoreKit 2 upload).
    public func verifyTransaction(_ token: String) async -> JWSVerificationResult<JWSTransaction> {
        await verify(token, as: JWSTransaction.self) { transaction in
            .init(
                signedDate: transaction.signedDate, bundleId: .some(transaction.bundleId), appAppleId: nil,
                environment: transaction.environment
            )
        }
    }

    /// Verifies and decodes signed subscription renewal info (it carries no bundle id).
    public func verifyRenewalInfo(_ token: String) async -> JWSVerificationResult<JWSRenewalInfo> {
        await verify(token, as: JWSRenewalInfo.self) { info in
            .init(signedDate: info.signedDate, bundleId: nil, appAppleId: nil, environment: info.environment)
        }
    }

    /// Verifies a signed app transaction; its validity time is `receiptCreationDate`.
    public func verifyAppTransaction(_ token: String) async -> JWSVerificationResult<AppTransaction> {
        await verify(token, as: AppTransaction.self) { transaction in
            .init(
                signedDate: transaction.receiptCreationDate, bundleId: .some(transaction.bundleId), appAppleId: nil,
                environment: transaction.receiptType
            )
        }
    }

    /// Verifies a notification's `signedPayload`, then its nested transaction and renewal info.
    public func verifyNotification(_ token: String) async -> JWSVerificationResult<VerifiedNotification> {
        let outer = await verify(token, as: NotificationPayload.self) { payload in
            .init(
                signedDate: payload.signedDate, bundleId: .some(payload.bundleId),
                appAppleId: .some(payload.data?.appAppleId ?? payload.summary?.appAppleId),
                environment: payload.environment
            )
        }
        let payload: NotificationPayload
        switch outer {
        case .valid(let verified): payload = verified
        case .invalid(let failure): return .invalid(failure)
        }
        var notification = VerifiedNotification(payload: payload)
        if let signed = payload.data?.signedTransactionInfo {
            switch await verifyTransaction(signed) {
            case .valid(let transaction): notification.transaction = transaction
            case .invalid(let failure): return .invalid(.nested(field: "signedTransactionInfo", failure))
            }
        }
        if let signed = payload.data?.signedRenewalInfo {
            switch await verifyRenewalInfo(signed) {
            case .valid(let info): notification.renewalInfo = info
            case .invalid(let failure): return .invalid(.nested(field: "signedRenewalInfo", failure))
            }
        }
        return .valid(notification)
    }

    /// Verifies a notification HTTP body as stored: `{"signedPayload": "…"}` (or a bare JWS).
    public func verifyNotificationBody(_ body: String) async -> JWSVerificationResult<VerifiedNotification> {
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("{") else { return await verifyNotification(trimmed) }
        guard trimmed.utf8.count <= configuration.maximumSize else {
            return .invalid(.tooLarge(size: trimmed.utf8.count, limit: configuration.maximumSize))
        }
        guard let body = try? JSONDecoder().decode(SignedNotificationBody.self, from: Data(trimmed.utf8)) else {
            return .invalid(.malformed("notification body has no signedPayload"))
        }
        return await verifyNotification(body.signedPayload)
    }

    // MARK: - The rules

    /// What the rules need to know about a payload.
    struct Claims {
        var signedDate: Date?
        /// `nil`: the payload kind has no bundle id (renewal info); `.some(nil)`: it should, but is absent.
        var bundleId: String??
        /// `nil`: not a notification, so no app id to compare.
        var appAppleId: Int64??
        var environment: AppStoreEnvironment?
    }

    func verify<Payload: Decodable & Sendable>(
        _ token: String,
        as type: Payload.Type,
        claims: (Payload) -> Claims
    ) async -> JWSVerificationResult<Payload> {
        guard token.utf8.count <= configuration.maximumSize else {
            return .invalid(.tooLarge(size: token.utf8.count, limit: configuration.maximumSize))
        }
        let jws: CompactJWS
        do {
            jws = try CompactJWS(token)
        } catch {
            return .invalid(error)
        }
        guard jws.header.alg == "ES256" else { return .invalid(.unsupportedAlgorithm(jws.header.alg ?? "(missing)")) }

        let payload: Payload
        do {
            payload = try AppStoreJSON.decoder().decode(Payload.self, from: jws.payload)
        } catch {
            return .invalid(.undecodablePayload(Self.describe(error)))
        }
        let claims = claims(payload)
        // Refused whatever else holds, and said first: "this is Xcode test data" tells an
        // operator more than the single self-signed certificate Xcode puts in x5c would.
        if let environment = claims.environment, environment == .xcode || environment == .localTesting {
            return .invalid(.environmentNotAccepted(environment.rawValue))
        }

        guard let x5c = jws.header.x5c else { return .invalid(.missingCertificateChain) }
        guard x5c.count == 3 else { return .invalid(.wrongCertificateCount(x5c.count)) }

        let validationTime: Date
        switch configuration.validationTime {
        case .signedDate: validationTime = claims.signedDate ?? Date()
        case .now: validationTime = Date()
        case .fixed(let date): validationTime = date
        }

        let leafKey: P256.Signing.PublicKey
        switch await trustedLeafKey(leaf: x5c[0], intermediate: x5c[1], at: validationTime) {
        case .success(let key): leafKey = key
        case .failure(let failure): return .invalid(failure)
        }

        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            leafKey.isValidSignature(signature, for: jws.signingInput)
        else {
            return .invalid(.invalidSignature)
        }

        if let bundleId = claims.bundleId, !configuration.bundleIds.contains(bundleId ?? "") {
            return .invalid(.bundleIdNotAccepted(bundleId))
        }
        // Sandbox notifications usually carry no appAppleId; production ones always do.
        if let expected = configuration.appAppleId, let actual = claims.appAppleId {
            if let actual, actual != expected { return .invalid(.appAppleIdMismatch(actual)) }
            if actual == nil, claims.environment == .production { return .invalid(.appAppleIdMismatch(nil)) }
        }
        guard let environment = claims.environment, configuration.environments.contains(environment) else {
            return .invalid(.environmentNotAccepted(claims.environment?.rawValue))
        }
        return .valid(payload)
    }

    /// The leaf's key when leaf and intermediate chain to a trusted root at `time`.
    func trustedLeafKey(
        leaf leafBase64: String,
        intermediate intermediateBase64: String,
        at time: Date
    ) async -> Result<P256.Signing.PublicKey, JWSVerificationFailure> {
        let cacheKey = ChainCache.Key(leaf: leafBase64, intermediate: intermediateBase64)
        if let key = chainCache.key(for: cacheKey, at: time) {
            return .success(key)
        }

        let leaf: Certificate
        let intermediate: Certificate
        do {
            leaf = try Self.certificate(leafBase64, name: "leaf")
            intermediate = try Self.certificate(intermediateBase64, name: "intermediate")
        } catch {
            return .failure(error)
        }
        guard leaf.extensions[oid: AppleMarkerExtensionsPolicy.leafOID] != nil else {
            return .failure(.leafMissingAppleOID)
        }
        guard intermediate.extensions[oid: AppleMarkerExtensionsPolicy.intermediateOID] != nil else {
            return .failure(.intermediateMissingAppleOID)
        }
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            return .failure(.malformedCertificate("leaf key is not P-256, as ES256 requires"))
        }

        // x5c[2] is deliberately not offered: the path must end in a configured root, whatever
        // root the token claims (Apple's mock chains carry a different x5c[2] and still verify).
        var verifier = Verifier(rootCertificates: CertificateStore(configuration.trustedRoots.certificates)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleMarkerExtensionsPolicy()
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
        case .validCertificate(let chain):
            let validFrom = chain.map(\.notValidBefore).max() ?? time
            let validUntil = chain.map(\.notValidAfter).min() ?? time
            chainCache.insert(.init(key: leaf.publicKey, validFrom: validFrom, validUntil: validUntil), for: cacheKey)
            return .success(key)
        case .couldNotValidate(let failures):
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            return .failure(.untrustedChain(reasons.isEmpty ? "no path to a trusted root" : reasons.joined(separator: "; ")))
        }
    }

    private static func certificate(_ base64: String, name: String) throws(JWSVerificationFailure) -> Certificate {
        // x5c is standard base64 (RFC 7515 §4.1.6), not base64url.
        guard let der = Data(base64Encoded: base64) else { throw .malformedCertificate("\(name) is not base64") }
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            throw .malformedCertificate("\(name): \(error)")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _):
            return "missing \(key.stringValue)"
        default:
            return String(describing: error)
        }
    }
}

/// Chains already verified, by the exact leaf and intermediate, with the period in which every
/// certificate of the chain is valid: a hit outside that period is verified again.
final class ChainCache: Sendable {
    struct Key: Hashable {
        var leaf: String
        var intermediate: String
    }

    struct Entry: Sendable {
        // Certificate.PublicKey rather than P256.Signing.PublicKey: the former is Sendable, and
        // unwrapping it on a hit is free.
        var key: Certificate.PublicKey
        var validFrom: Date
        var validUntil: Date
    }

    /// Apple rotates signing leaves yearly; a handful of entries covers real data, the bound
    /// only stops a stream of forged chains from growing memory.
    static let capacity = 64

    private let entries = Mutex<[Key: Entry]>([:])

    func key(for key: Key, at time: Date) -> P256.Signing.PublicKey? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.validFrom <= time, time <= entry.validUntil else { return nil }
            return P256.Signing.PublicKey(entry.key)
        }
    }

    func insert(_ entry: Entry, for key: Key) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
