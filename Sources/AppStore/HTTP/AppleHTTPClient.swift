import AsyncHTTPClient

/// The `HTTPClient` both Apple clients use: no redirects (a token or receipt must never follow
/// one), and a connection pool as wide as the requests sent at once, so every request reuses a
/// warm connection.
enum AppleHTTPClient {
    static func make(requestTimeout: Duration, maxConcurrentRequests: Int) -> HTTPClient {
        var http = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(min(requestTimeout.milliseconds, 10_000))),
            connectionPool: .init(
                idleTimeout: .seconds(60),
                concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maxConcurrentRequests))
        )
        http.httpVersion = .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
    }

    /// Runs `body` with `http`, which is shut down afterwards whatever happens.
    static func using<T: Sendable>(_ http: HTTPClient, _ body: (HTTPClient) async throws -> T) async throws -> T {
        do {
            let result = try await body(http)
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }
}
