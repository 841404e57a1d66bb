import Crypto
import Foundation

/// The bearer token of one Server API request: an ES256 JWT signed with the ``ServerAPIKey``.
///
/// A fresh token per request (Apple's advice and its library's habit), so a token that leaks
/// from a proxy log is useless five minutes later. The token is a secret: never log it.
public enum ServerAPIToken {
    /// The audience Apple requires.
    public static let audience = "appstoreconnect-v1"
    /// How long a token lives; Apple allows up to 60 minutes, its library uses 5.
    public static let lifetime: TimeInterval = 5 * 60

    /// The JOSE header.
    public struct Header: Codable, Hashable, Sendable {
        /// Always `ES256`.
        public var alg: String
        /// The key id.
        public var kid: String
        /// Always `JWT`.
        public var typ: String
    }

    /// The claims Apple reads.
    public struct Claims: Codable, Hashable, Sendable {
        /// Issuer id.
        public var iss: String
        /// Issued at, epoch seconds.
        public var iat: Int64
        /// Expires at, epoch seconds.
        public var exp: Int64
        /// `appstoreconnect-v1`.
        public var aud: String
        /// The app's bundle id.
        public var bid: String
    }

    /// Signs a token for `key` issued at `now`.
    public static func make(key: ServerAPIKey, now: Date = Date()) throws -> String {
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        let header = Header(alg: "ES256", kid: key.keyID, typ: "JWT")
        let claims = Claims(
            iss: key.issuerID, iat: issued, exp: issued + Int64(lifetime), aud: audience, bid: key.bundleID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput =
            Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        // ES256 in a JWS is the raw r||s pair (RFC 7518 §3.4), not DER.
        let signature = try key.privateKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
