import Crypto
import Foundation
import Hummingbird
import NIOCore
import _CryptoExtras

/// Why an assertion was refused (logged by the simulator; the client sees Google's OAuth error).
enum PlayAssertionFailure: Error, Equatable, CustomStringConvertible {
    case unsupportedGrantType
    case malformed
    case wrongAlgorithm
    case badSignature
    case wrongIssuer
    case wrongScope
    case wrongAudience
    case expired
    case lifetimeTooLong

    var description: String {
        switch self {
        case .unsupportedGrantType: "grant_type is not urn:ietf:params:oauth:grant-type:jwt-bearer"
        case .malformed: "the assertion is not a JWT"
        case .wrongAlgorithm: "alg is not RS256"
        case .badSignature: "the signature does not verify with the service account's key"
        case .wrongIssuer: "iss is not the service account's client_email"
        case .wrongScope: "scope does not name the androidpublisher scope"
        case .wrongAudience: "aud is not the token URI"
        case .expired: "the assertion expired"
        case .lifetimeTooLong: "exp is more than an hour after iat, or iat is in the future"
        }
    }

    /// Google's answer: `{"error", "error_description"}` with HTTP 400
    /// (developers.google.com/identity/protocols/oauth2/service-account, "Handling the response").
    var oauthError: (error: String, description: String) {
        switch self {
        case .unsupportedGrantType: ("unsupported_grant_type", "Invalid grant_type: ")
        case .wrongScope: ("invalid_scope", "Invalid OAuth scope or ID token audience provided.")
        case .badSignature: ("invalid_grant", "Invalid JWT Signature.")
        case .wrongAudience: ("invalid_grant", "Invalid JWT: Failed audience check.")
        case .expired, .lifetimeTooLong:
            (
                "invalid_grant",
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                    + "Check your iat and exp values in the JWT claim."
            )
        case .malformed, .wrongAlgorithm, .wrongIssuer: ("invalid_grant", "Invalid grant: account not found")
        }
    }
}

extension AppStoreSimulator {
    /// Access tokens live an hour; Google answers `expires_in` 3599.
    static let playAccessTokenLifetime: TimeInterval = 3599

    /// `POST /token`: the OAuth 2.0 JWT bearer grant of a service account (RFC 7523).
    func playToken(_ request: Request) async -> Response {
        var request = request
        guard let body = try? await request.collectBody(upTo: 64 << 10) else {
            return Self.json(["error": "invalid_request", "error_description": "Body too large."], status: .badRequest)
        }
        let form = Self.formFields(String(buffer: body))
        // A failure shows as a refused signature below.
        try? await play.prepareKeys()
        switch checkAssertion(grantType: form["grant_type"], assertion: form["assertion"], now: Date()) {
        case .failure(let failure):
            play.store.count { $0.tokensRefused += 1 }
            configuration.logger.info("Play token refused", metadata: ["reason": "\(failure)"])
            let (error, description) = failure.oauthError
            return Self.json(["error": error, "error_description": description], status: .badRequest)
        case .success:
            let token = "ya29.sim-" + JWSBase64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
            play.store.withLock { inner in
                let now = Date()
                inner.accessTokens = inner.accessTokens.filter { $0.value > now }
                inner.accessTokens[token] = now.addingTimeInterval(Self.playAccessTokenLifetime)
                inner.stats.tokensIssued += 1
            }
            return Self.json(
                ["access_token": token, "expires_in": Int(Self.playAccessTokenLifetime), "token_type": "Bearer"])
        }
    }

    /// Checks an assertion as Google's token endpoint does: RS256 by the service account's key,
    /// `iss` its client email, `scope` naming androidpublisher, `aud` the token URI, `exp` at most an
    /// hour after `iat` and not passed (a minute's clock skew allowed).
    func checkAssertion(grantType: String?, assertion: String?, now: Date) -> Result<Void, PlayAssertionFailure> {
        guard grantType == "urn:ietf:params:oauth:grant-type:jwt-bearer" else { return .failure(.unsupportedGrantType) }
        guard let assertion else { return .failure(.malformed) }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = JWSBase64URL.decode(parts[0]),
            let claimsData = JWSBase64URL.decode(parts[1]), let signature = JWSBase64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode(AssertionHeader.self, from: headerData),
            let claims = try? JSONDecoder().decode(AssertionClaims.self, from: claimsData)
        else { return .failure(.malformed) }
        guard header.alg == "RS256" else { return .failure(.wrongAlgorithm) }
        guard let account = try? play.serviceAccount(),
            account.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature),
                for: SHA256.hash(data: Data("\(parts[0]).\(parts[1])".utf8)), padding: .insecurePKCS1v1_5)
        else { return .failure(.badSignature) }
        guard claims.iss == account.clientEmail else { return .failure(.wrongIssuer) }
        let scopes = claims.scope?.split(separator: " ").map(String.init) ?? []
        guard scopes.contains(PlaySimulator.scope) else { return .failure(.wrongScope) }
        guard let tokenURI = play.tokenURI, claims.aud == tokenURI else { return .failure(.wrongAudience) }
        guard let iat = claims.iat, let exp = claims.exp else { return .failure(.malformed) }
        let seconds = Int64(now.timeIntervalSince1970)
        guard exp > seconds - 60 else { return .failure(.expired) }
        guard exp - iat <= 3600, iat <= seconds + 60 else { return .failure(.lifetimeTooLong) }
        return .success(())
    }

    private struct AssertionHeader: Decodable {
        var alg: String?
    }

    private struct AssertionClaims: Decodable {
        var iss: String?
        var scope: String?
        var aud: String?
        var iat: Int64?
        var exp: Int64?
    }

    /// Whether a request carries an access token the token endpoint issued and that has not expired.
    func playAccessTokenIsValid(_ authorization: String?) -> Bool {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return false }
        let token = String(authorization.dropFirst("Bearer ".count))
        return play.store.withLock { inner in inner.accessTokens[token].map { $0 > Date() } ?? false }
    }

    /// `application/x-www-form-urlencoded` fields (`+` is a space, then percent-decoding).
    static func formFields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            guard let name = parts.first else { continue }
            fields[decode(name)] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }
}
