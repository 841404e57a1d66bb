import Crypto
import Foundation
import Synchronization
// Validity is checked at the data's own signing time, as Apple's libraries do offline.
@_spi(FixedExpiryValidationTime) import X509

/// Verifies StoreKit 2 signed data (transactions, renewal info, notifications) offline, by the
/// rules of SPEC §3, the way Apple's `SignedDataVerifier` does with online checks off.
///
/// Safe to share between tasks. Verified headers (with their chains) are cached, so verifying
/// thousands of JWS signed by the same leaf costs one ECDSA check each.
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
    private let headerCache = VerifiedHeaderCache()

    /// Creates a verifier.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// How many verified chains are cached (for tests and metrics).
    public var cachedChainCount: Int { headerCache.count }

    /// Verifies and decodes a signed transaction (`signedTransactionInfo`, a StoreKit 2 upload).
    public func verifyTransaction(_ token: String) async -> JWSVerificationResult<JWSTransaction> {
        await verify(token, as: JWSTransaction.self, decode: JWSTransaction.init(appStoreJSON:)) { transaction in
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
                appAppleId: .some(payload.appAppleId),
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
        let trimmed = body.trimmingWhitespacesAndNewlines()
        guard trimmed.hasPrefix("{") else { return await verifyNotification(trimmed) }
        guard trimmed.utf8.count <= configuration.maximumSize else {
            return .invalid(.tooLarge(size: trimmed.utf8.count, limit: configuration.maximumSize))
        }
        guard
            let payload = Self.signedPayload(directlyFrom: trimmed)
                ?? (try? JSONDecoder().decode(SignedNotificationBody.self, from: Data(trimmed.utf8)))?.signedPayload
        else {
            return .invalid(.malformed("notification body has no signedPayload"))
        }
        return await verifyNotification(payload)
    }

    /// The `signedPayload` of `{"signedPayload": "…"}` read by the direct reader (a JWS needs no
    /// escapes), as `JSONDecoder` reads ``SignedNotificationBody``: other members are ignored. Nil
    /// leaves the body to `JSONDecoder` (escapes, nested values, the member twice or not a string).
    static func signedPayload(directlyFrom body: String) -> String? {
        var body = body
        return body.withUTF8 { bytes in
            var payload: String?
            let complete = DirectJSON.members(of: bytes) { name, value in
                guard name.elementsEqual("signedPayload".utf8) else { return true }
                guard payload == nil, let text = value.string else { return false }
                payload = text
                return true
            }
            return complete ? payload : nil
        }
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
        decode: ([UInt8]) throws -> Payload = { try AppStoreJSON.decoder().decode(Payload.self, from: Data($0)) },
        claims: (Payload) -> Claims
    ) async -> JWSVerificationResult<Payload> {
        guard token.utf8.count <= configuration.maximumSize else {
            return .invalid(.tooLarge(size: token.utf8.count, limit: configuration.maximumSize))
        }
        var token = token
        let cached = token.withUTF8 { verifyWithVerifiedHeader($0, decode: decode, claims: claims) }
        if let cached { return cached }

        let jws: CompactJWS
        do {
            jws = try CompactJWS(token)
        } catch {
            return .invalid(error)
        }
        guard jws.header.alg == "ES256" else { return .invalid(.unsupportedAlgorithm(jws.header.alg ?? "(missing)")) }

        let payload: Payload
        do {
            payload = try decode(jws.payload)
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

        let leafKey: P256.Signing.PublicKey
        switch await trustedLeafKey(
            header: jws.headerSegment, leaf: x5c[0], intermediate: x5c[1], at: validationTime(claims))
        {
        case .success(let key): leafKey = key
        case .failure(let failure): return .invalid(failure)
        }

        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            leafKey.isValidSignature(signature, for: jws.signingInput)
        else {
            return .invalid(.invalidSignature)
        }
        return accept(payload, claims: claims)
    }

    /// The verdict on a token whose header is one already verified, whose chain is valid at the
    /// payload's time and whose parts are canonical base64url; nil sends it down the full path
    /// above, which decides everything else. Skips what that path would find unchanged: the
    /// header's JSON, the chain and the hashing of the header.
    private func verifyWithVerifiedHeader<Payload>(
        _ token: UnsafeBufferPointer<UInt8>,
        decode: ([UInt8]) throws -> Payload,
        claims: (Payload) -> Claims
    ) -> JWSVerificationResult<Payload>? {
        guard let firstDot = token.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        let rest = UnsafeBufferPointer(rebasing: token[(firstDot + 1)...])
        guard let secondDot = rest.firstIndex(of: UInt8(ascii: ".")).map({ $0 + firstDot + 1 }) else { return nil }
        let header = UnsafeBufferPointer(rebasing: token[..<firstDot])
        let payloadText = UnsafeBufferPointer(rebasing: token[(firstDot + 1)..<secondDot])
        let signatureText = UnsafeBufferPointer(rebasing: token[(secondDot + 1)...])
        guard let verified = headerCache.entry(forHeader: header),
            let payloadBytes = Base64URL.decodeCanonical(payloadText), !payloadBytes.isEmpty,
            let signatureBytes = Base64URL.decodeCanonical(signatureText)
        else { return nil }

        let payload: Payload
        do {
            payload = try decode(payloadBytes)
        } catch {
            return .invalid(.undecodablePayload(Self.describe(error)))
        }
        let claims = claims(payload)
        if let environment = claims.environment, environment == .xcode || environment == .localTesting {
            return .invalid(.environmentNotAccepted(environment.rawValue))
        }
        let time = validationTime(claims)
        guard verified.validFrom <= time, time <= verified.validUntil,
            let leafKey = P256.Signing.PublicKey(verified.key)
        else { return nil }

        var digest = verified.signingPrefix.state
        digest.update(bufferPointer: UnsafeRawBufferPointer(payloadText))
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            leafKey.isValidSignature(signature, for: digest.finalize())
        else {
            return .invalid(.invalidSignature)
        }
        return accept(payload, claims: claims)
    }

    private func validationTime(_ claims: Claims) -> Date {
        switch configuration.validationTime {
        case .signedDate: claims.signedDate ?? Date()
        case .now: Date()
        case .fixed(let date): date
        }
    }

    /// The rules on what the payload says, once Apple is known to have signed it.
    private func accept<Payload>(_ payload: Payload, claims: Claims) -> JWSVerificationResult<Payload> {
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

    /// The leaf's key when leaf and intermediate chain to a trusted root at `time`. `header` is
    /// the token's first segment, exactly as sent: the cache's key (nil: the cache is not used).
    func trustedLeafKey(
        header: [UInt8]? = nil,
        leaf leafBase64: String,
        intermediate intermediateBase64: String,
        at time: Date
    ) async -> Result<P256.Signing.PublicKey, JWSVerificationFailure> {
        if let verified = header?.withUnsafeBufferPointer({ headerCache.entry(forHeader: $0) }),
            verified.validFrom <= time, time <= verified.validUntil,
            let key = P256.Signing.PublicKey(verified.key)
        {
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
            guard let header else { return .success(key) }
            var signingPrefix = SHA256()
            signingPrefix.update(data: header)
            signingPrefix.update(data: [UInt8(ascii: ".")])
            headerCache.insert(
                .init(
                    key: leaf.publicKey, validFrom: chain.map(\.notValidBefore).max() ?? time,
                    validUntil: chain.map(\.notValidAfter).min() ?? time, signingPrefix: .init(state: signingPrefix)),
                forHeader: header)
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

/// Headers whose certificate chain was verified, by their exact bytes (the token's first
/// segment as sent), with the period in which every certificate of the chain is valid: a token
/// signed outside that period has its chain verified again. Only a header that passed the full
/// path gets in, so a token with any other header, or a chain that is not trusted, never meets
/// an entry. The hash state after `header "."` lets a token's signing input be hashed from its
/// payload on.
final class VerifiedHeaderCache: Sendable {
    struct Entry: Sendable {
        // Certificate.PublicKey rather than P256.Signing.PublicKey: the former is Sendable, and
        // unwrapping it on a hit is free.
        var key: Certificate.PublicKey
        var validFrom: Date
        var validUntil: Date
        var signingPrefix: SigningPrefix
    }

    /// SHA-256 after `header "."`. A value whose storage is copied before it is written to (and
    /// the cache never writes to its own), so sharing it between tasks is safe; swift-crypto
    /// does not mark it Sendable.
    struct SigningPrefix: @unchecked Sendable {
        let state: SHA256
    }

    /// Apple rotates signing leaves yearly; a handful of entries covers real data, the bound
    /// only stops memory from growing.
    static let capacity = 64

    // A list compared byte for byte: it holds one or two headers in practice, and comparing a
    // few kilobytes costs less than hashing them.
    private let entries = Mutex<[(header: [UInt8], entry: Entry)]>([])

    func entry(forHeader header: UnsafeBufferPointer<UInt8>) -> Entry? {
        entries.withLock { entries in
            entries.first { Self.equal($0.header, header) }?.entry
        }
    }

    func insert(_ entry: Entry, forHeader header: [UInt8]) {
        entries.withLock { entries in
            if let index = entries.firstIndex(where: { $0.header == header }) {
                entries[index].entry = entry
                return
            }
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries.append((header, entry))
        }
    }

    var count: Int { entries.withLock { $0.count } }

    private static func equal(_ stored: [UInt8], _ header: UnsafeBufferPointer<UInt8>) -> Bool {
        guard stored.count == header.count else { return false }
        guard let base = header.baseAddress else { return stored.isEmpty }
        return stored.withUnsafeBytes { memcmp($0.baseAddress!, base, header.count) == 0 }
    }
}
