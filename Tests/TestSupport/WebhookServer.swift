import Hummingbird
import Logging

/// A local HTTP server standing for the app's webhook in the outbox's tests.
public enum WebhookServer {
    /// Runs `body` with the port of a server answering as `router` does, stopped after it.
    public static func run(
        _ router: Router<BasicRequestContext>, _ body: (Int) async throws -> Void
    ) async throws {
        let (ports, sink) = AsyncStream.makeStream(of: Int.self)
        let server = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { sink.yield($0.localAddress?.port ?? 0); sink.finish() },
            logger: Logger(label: "hook", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            try await body(port)
            group.cancelAll()
        }
    }
}
