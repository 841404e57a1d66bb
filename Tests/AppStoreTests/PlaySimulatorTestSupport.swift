import AppStoreSimulator
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import _CryptoExtras

/// Plain HTTP to the simulated Google Play, as the job's client would speak it.
enum PlayHTTP {
    struct Answer {
        var status: Int
        var body: Data
        var headers: [String: String]

        /// The body as a JSON object (empty when it is not one).
        var object: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
    }

    static func send(
        _ sim: RunningSimulator, _ method: String, _ path: String, body: String? = nil,
        contentType: String = "application/json", bearer: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: sim.baseURL + path)
        request.method = .init(rawValue: method)
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        return Answer(status: Int(response.status.code), body: Data(bytes.readableBytesView), headers: headers)
    }

    /// An admin call that must succeed; its JSON object.
    static func admin(_ sim: RunningSimulator, _ path: String, _ body: String? = nil, method: String = "POST")
        async throws -> [String: Any]
    {
        let answer = try await send(sim, method, path, body: body)
        guard answer.status == 200 else {
            throw AdminFailure(description: "\(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        return answer.object
    }

    struct AdminFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// An assertion as Google's libraries build it for a service account, signed with `key`.
    static func assertion(
        key: _RSA.Signing.PrivateKey, email: String, audience: String,
        scope: String = "https://www.googleapis.com/auth/androidpublisher", lifetime: Int64 = 3600, age: Int64 = 0
    ) throws -> String {
        let now = Int64(Date().timeIntervalSince1970) - age
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "typ": "JWT"], options: [.sortedKeys])
        let claims = try JSONSerialization.data(
            withJSONObject: ["iss": email, "scope": scope, "aud": audience, "iat": now, "exp": now + lifetime],
            options: [.sortedKeys])
        let input = base64URL(header) + "." + base64URL(claims)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// The service account's key and address, read from the key file as the job reads it.
    static func serviceAccount(_ sim: RunningSimulator) async throws -> (
        key: _RSA.Signing.PrivateKey, email: String, tokenURI: String
    ) {
        let file = try JSONSerialization.jsonObject(with: try await sim.playSettings().serviceAccountJSON) as? [String: Any]
        return (
            try _RSA.Signing.PrivateKey(pemRepresentation: file?["private_key"] as? String ?? ""),
            file?["client_email"] as? String ?? "", file?["token_uri"] as? String ?? ""
        )
    }

    /// `POST /token` with an assertion; the answer.
    static func token(_ sim: RunningSimulator, assertion: String) async throws -> Answer {
        let body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        return try await send(sim, "POST", "/token", body: body, contentType: "application/x-www-form-urlencoded")
    }

    /// An access token for the simulator's service account.
    static func accessToken(_ sim: RunningSimulator) async throws -> String {
        let account = try await serviceAccount(sim)
        let answer = try await token(
            sim, assertion: try assertion(key: account.key, email: account.email, audience: account.tokenURI))
        guard let token = answer.object["access_token"] as? String else {
            throw AdminFailure(description: "no access token: \(String(decoding: answer.body, as: UTF8.self))")
        }
        return token
    }

    /// An RSA key the simulator does not know, made on a thread of its own (not the cooperative pool's).
    static func otherKey() async throws -> _RSA.Signing.PrivateKey {
        let der = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try _RSA.Signing.PrivateKey(keySize: .bits2048).derRepresentation })
            }
        }
        return try _RSA.Signing.PrivateKey(derRepresentation: der)
    }

    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    /// The Developer API path of a package.
    static func api(_ package: String, _ rest: String) -> String {
        "/androidpublisher/v3/applications/\(package)/\(rest)"
    }
}

/// A local push endpoint standing for the job's receiver: it records each POST's query and body.
final class PushEndpoint: Sendable {
    struct Received: Sendable {
        var query: String
        var body: Data
    }

    private let received = Mutex<[Received]>([])
    var requests: [Received] { received.withLock { $0 } }

    /// Runs the endpoint (answering `status`) for the duration of `body`, which gets its URL.
    static func with<T: Sendable>(
        status: HTTPResponse.Status = .noContent, _ body: (PushEndpoint, String) async throws -> T
    )
        async throws -> T
    {
        let endpoint = PushEndpoint()
        let router = Router(context: BasicRequestContext.self)
        router.post("rtdn") { request, _ in
            var request = request
            let bytes = try await request.collectBody(upTo: 1 << 20)
            endpoint.received.withLock {
                $0.append(Received(query: request.uri.query ?? "", body: Data(bytes.readableBytesView)))
            }
            return Response(status: status)
        }
        var logger = Logger(label: "push-endpoint")
        logger.logLevel = .critical
        let (ports, sink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                sink.yield(channel.localAddress?.port ?? 0)
                sink.finish()
            }, logger: logger)
        let server = Task { try await app.runService() }
        defer { server.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        return try await body(endpoint, "http://127.0.0.1:\(port)/rtdn")
    }
}
