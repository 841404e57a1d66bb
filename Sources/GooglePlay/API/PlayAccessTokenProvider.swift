import AppStore
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import _CryptoExtras

/// Buys and keeps the Developer API's OAuth 2.0 access token: the JWT bearer grant (RFC 7523) of
/// Google's "Using OAuth 2.0 for Server to Server Applications", an RS256 assertion signed with
/// the service account's key (`iss` its email, `scope` androidpublisher, `aud` its `token_uri`,
/// at most one hour) exchanged at `token_uri` for `{"access_token", "expires_in", "token_type"}`.
///
/// The token is reused until ``refreshMargin`` before it expires; concurrent callers share one
/// refresh. HTTP 400/401 from the endpoint throws ``PlayAPIConfigurationError``; 5xx, 429,
/// timeouts and connection errors are retried, then throw ``PlayAccessTokenUnavailable``.
/// Neither the assertion nor the token is ever logged.
public actor PlayAccessTokenProvider {
    /// How long an assertion is valid; Google allows at most an hour.
    public static let assertionLifetime: TimeInterval = 3600

    public nonisolated let key: PlayServiceAccountKey
    /// How long before its expiry a token is replaced.
    public nonisolated let refreshMargin: Duration
    private let http: HTTPClient
    private let requestTimeout: Duration
    private let retry: RetryPolicy
    private let now: @Sendable () -> Date

    private var current: (token: String, expires: Date)?
    private var refreshing: Task<(token: String, expires: Date), any Error>?
    /// Tokens bought so far (for tests and the run's counters).
    public private(set) var fetches = 0

    /// `now` is the clock the expiry is judged by (tests move it).
    public init(
        key: PlayServiceAccountKey, httpClient: HTTPClient, requestTimeout: Duration = .seconds(30),
        refreshMargin: Duration = .seconds(300), retry: RetryPolicy = RetryPolicy(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.key = key
        http = httpClient
        self.requestTimeout = requestTimeout
        self.refreshMargin = refreshMargin
        self.retry = retry
        self.now = now
    }

    /// A token valid for at least ``refreshMargin`` more, bought if need be.
    public func accessToken(logger: Logger) async throws -> String {
        if let current, current.expires.timeIntervalSince(now()) > refreshMargin.seconds { return current.token }
        if let refreshing { return try await refreshing.value.token }
        let refresh = Task { try await self.fetch(logger: logger) }
        refreshing = refresh
        defer { refreshing = nil }
        let fresh = try await refresh.value
        current = fresh
        return fresh.token
    }

    /// Forgets the token, so the next call buys a new one.
    public func invalidate() {
        current = nil
    }

    /// The signed assertion for `issued` (public for the simulator's and the tests' checks).
    public nonisolated static func assertion(key: PlayServiceAccountKey, issued: Date) throws -> String {
        struct Header: Encodable {
            var alg = "RS256"
            var typ = "JWT"
            var kid: String?
        }
        struct Claims: Encodable {
            var iss: String
            var scope: String
            var aud: String
            var iat: Int64
            var exp: Int64
        }
        let iat = Int64(issued.timeIntervalSince1970.rounded(.down))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(Header(kid: key.privateKeyID))
        let claims = try encoder.encode(
            Claims(iss: key.clientEmail, scope: GooglePlay.scope, aud: key.tokenURI, iat: iat,
                exp: iat + Int64(assertionLifetime)))
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        // RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
        let signature = try key.privateKey.signature(
            for: SHA256.hash(data: Data(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    private struct Answer: Decodable {
        var access_token: String?
        var expires_in: Double?
        var token_type: String?
    }

    private struct OAuthError: Decodable {
        var error: String?
    }

    private func fetch(logger: Logger) async throws -> (token: String, expires: Date) {
        var attempt = 0
        while true {
            attempt += 1
            try Task.checkCancellation()
            let issued = now()
            var request = HTTPClientRequest(url: key.tokenURI)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.headers.add(name: "Accept", value: "application/json")
            let form = "grant_type=" + Self.formEscape("urn:ietf:params:oauth:grant-type:jwt-bearer")
                + "&assertion=" + Self.formEscape(try Self.assertion(key: key, issued: issued))
            request.body = .bytes(ByteBuffer(string: form))

            let failure: String
            do {
                let answer = try await HTTPExchange.exchange(request, within: requestTimeout, upTo: 1 << 20, http: http)
                let body = Data(answer.body.readableBytesView)
                switch answer.status {
                case 200:
                    if let decoded = try? JSONDecoder().decode(Answer.self, from: body),
                        let token = decoded.access_token, !token.isEmpty, let seconds = decoded.expires_in, seconds > 0
                    {
                        fetches += 1
                        logger.debug("bought a Google Play access token", metadata: ["google.expires_in": "\(Int(seconds))"])
                        return (token, issued.addingTimeInterval(seconds))
                    }
                    failure = "the token endpoint answered 200 without access_token and expires_in"
                case 400, 401:
                    // OAuth's error code (`invalid_grant`, `unauthorized_client`) names no secret.
                    let code = (try? JSONDecoder().decode(OAuthError.self, from: body))?.error
                    throw PlayAPIConfigurationError(
                        endpoint: .token, httpStatus: answer.status, reason: code, clientEmail: key.clientEmail)
                default:
                    failure = "the token endpoint answered HTTP \(answer.status)"
                }
            } catch let error as PlayAPIConfigurationError {
                throw error
            } catch let error as HTTPExchange.Timeout {
                failure = "the token endpoint timed out (\(error))"
            } catch let error as HTTPClientError
                where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
            {
                failure = "the token endpoint timed out (\(error))"
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                failure = "the token endpoint: connection error \(type(of: error))"
            }
            guard attempt < retry.maxAttempts else {
                throw PlayAccessTokenUnavailable(reason: "\(failure) (after \(attempt) attempts)")
            }
            logger.info("Google Play token request failed, retrying", metadata: ["reason": "\(failure)"])
            try await Task.sleep(for: retry.backoff(afterAttempt: attempt))
        }
    }

    /// `application/x-www-form-urlencoded` escaping of a value.
    static func formEscape(_ value: String) -> String {
        PlayDeveloperAPIClient.escape(value)
    }
}

/// The token endpoint could not answer now (5xx, 429, timeouts, connection errors) and its retries
/// are spent: the calls waiting for the token are `retryLater`.
public struct PlayAccessTokenUnavailable: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { "no Google Play access token: \(reason)" }
}

extension Duration {
    /// The duration in seconds, fractions kept.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
