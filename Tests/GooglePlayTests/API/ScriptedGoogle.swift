import Foundation
import GooglePlay
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A scripted Google on loopback, a real HTTP server: the OAuth token endpoint at `/token` and
/// the Developer API under `/androidpublisher/v3/`. Each path answers from its queue of replies
/// (the last one repeats); every request is recorded with its arrival time.
final class ScriptedGoogle: Sendable {
    struct Reply: Sendable {
        var status: Int
        var body: String
        var headers: [String: String] = [:]
        /// Waited before answering.
        var delay: Duration? = nil

        static func json(_ body: String, status: Int = 200) -> Reply { Reply(status: status, body: body) }
        static func error(_ status: Int, reason: String, statusText: String = "FAILED_PRECONDITION") -> Reply {
            Reply(
                status: status,
                body: #"{"error":{"code":\#(status),"message":"scripted \#(reason)","status":"\#(statusText)","errors":[{"message":"scripted","domain":"androidpublisher","reason":"\#(reason)"}]}}"#)
        }
    }

    struct Recorded: Sendable {
        var method: String
        /// The path as sent (percent-encoding kept).
        var path: String
        var query: [String: String]
        var authorization: String?
        var contentType: String?
        var body: String
        var arrival: ContinuousClock.Instant
    }

    private let replies = Mutex<[String: [Reply]]>([:])
    private let recorded = Mutex<[Recorded]>([])

    /// A token answer valid for `expiresIn` seconds.
    static func token(_ value: String, expiresIn: Int = 3599) -> Reply {
        .json(#"{"access_token":"\#(value)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
    }

    init(token: Reply = ScriptedGoogle.token("ya29.first")) {
        script("/token", [token])
    }

    /// Sets the replies of `path` (as the client sends it, without the query).
    func script(_ path: String, _ queue: [Reply]) {
        replies.withLock { $0[path] = queue }
    }

    var requests: [Recorded] { recorded.withLock { $0 } }
    func requests(to path: String) -> [Recorded] { requests.filter { $0.path == path } }

    private func reply(for path: String) -> Reply {
        replies.withLock { replies in
            guard var queue = replies[path], let first = queue.first else {
                return .error(404, reason: "notFound", statusText: "NOT_FOUND")
            }
            if queue.count > 1 {
                queue.removeFirst()
                replies[path] = queue
            }
            return first
        }
    }

    /// Runs `body` with the server's base URL, stopped after it.
    func run(_ body: (String) async throws -> Void) async throws {
        let responder = CallbackResponder<BasicRequestContext> { [self] request, _ in
            let arrival = ContinuousClock.now
            let text = String(buffer: try await request.body.collect(upTo: 1 << 20))
            let raw = request.uri.string
            let path = String(raw.prefix { $0 != "?" })
            var query: [String: String] = [:]
            for (key, value) in request.uri.queryParameters { query[String(key)] = String(value) }
            recorded.withLock {
                $0.append(
                    Recorded(
                        method: request.method.rawValue, path: path, query: query,
                        authorization: request.headers[.authorization], contentType: request.headers[.contentType],
                        body: text, arrival: arrival))
            }
            let reply = reply(for: path)
            if let delay = reply.delay { try await Task.sleep(for: delay) }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            for (name, value) in reply.headers { headers[HTTPField.Name(name)!] = value }
            return Response(
                status: .init(code: reply.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: reply.body)))
        }
        let (ports, sink) = AsyncStream.makeStream(of: Int.self)
        let server = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { sink.yield($0.localAddress?.port ?? 0); sink.finish() },
            logger: Logger(label: "google", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            try await body("http://127.0.0.1:\(port)")
            group.cancelAll()
        }
    }
}
