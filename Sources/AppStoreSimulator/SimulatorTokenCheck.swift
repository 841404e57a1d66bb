import AppStore
import Crypto
import Foundation

/// Checks a Server API bearer token as Apple does, for the simulator: ES256 signature by the
/// configured key, `kid`, `iss`, `aud`, `bid`, and a live `iat`–`exp` window of at most an hour.
enum SimulatorTokenCheck {
    /// Why a token was refused (logged by the simulator; the client only sees HTTP 401).
    enum Failure: Error, Equatable, CustomStringConvertible {
        case missing
        case malformed
        case wrongAlgorithm
        case wrongKeyID
        case badSignature
        case wrongIssuer
        case wrongAudience
        case wrongBundle(String)
        case expired
        case notYetValid
        case lifetimeTooLong

        var description: String {
            switch self {
            case .missing: "no bearer token"
            case .malformed: "malformed token"
            case .wrongAlgorithm: "alg is not ES256"
            case .wrongKeyID: "unknown kid"
            case .badSignature: "signature does not verify with the configured key"
            case .wrongIssuer: "wrong iss"
            case .wrongAudience: "wrong aud"
            case .wrongBundle(let bid): "bundle \(bid) not allowed"
            case .expired: "token expired"
            case .notYetValid: "iat in the future"
            case .lifetimeTooLong: "exp more than 60 minutes after iat"
            }
        }
    }

    /// Clock skew tolerated on `iat` and `exp`.
    static let leeway: Int64 = 60

    /// The token's bundle id when the token is acceptable.
    static func check(
        authorization: String?, key: SimulatorAPIKey, bundleIDs: Set<String>, now: Date
    ) -> Result<String, Failure> {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return .failure(.missing) }
        let token = authorization.dropFirst("Bearer ".count)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = JWSBase64URL.decode(parts[0]),
            let claimsData = JWSBase64URL.decode(parts[1]), let signatureData = JWSBase64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode(ServerAPIToken.Header.self, from: headerData),
            let claims = try? JSONDecoder().decode(ServerAPIToken.Claims.self, from: claimsData)
        else { return .failure(.malformed) }
        guard header.alg == "ES256" else { return .failure(.wrongAlgorithm) }
        guard header.kid == key.keyID else { return .failure(.wrongKeyID) }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return .failure(.badSignature) }
        guard claims.iss == key.issuerID else { return .failure(.wrongIssuer) }
        guard claims.aud == ServerAPIToken.audience else { return .failure(.wrongAudience) }
        guard bundleIDs.isEmpty || bundleIDs.contains(claims.bid) else { return .failure(.wrongBundle(claims.bid)) }
        let seconds = Int64(now.timeIntervalSince1970)
        guard claims.exp > seconds - leeway else { return .failure(.expired) }
        guard claims.iat <= seconds + leeway else { return .failure(.notYetValid) }
        guard claims.exp - claims.iat <= 3600 else { return .failure(.lifetimeTooLong) }
        return .success(claims.bid)
    }
}
