import AsyncHTTPClient
import Foundation

/// One request to an endpoint the job does not control (the outbox webhook, the app's
/// notification endpoint, the preflight's check of the webhook) and its whole answer, head and
/// body, within one deadline: an endpoint that answers its head and then trickles the body is cut
/// off by it too. At most 64 KB of the body is read (and dropped), so that the connection ends
/// cleanly.
enum HTTPExchange {
    /// The answer's status, or nil when the whole answer did not come within `deadline`.
    /// Cancellation ends the wait at once.
    static func send(_ request: HTTPClientRequest, within deadline: Duration, http: HTTPClient) async throws -> Int? {
        let (seconds, attoseconds) = deadline.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask {
                let response = try await http.execute(request, timeout: .nanoseconds(nanoseconds))
                var read = 0
                for try await chunk in response.body {
                    read += chunk.readableBytes
                    if read > 1 << 16 { break }
                }
                try Task.checkCancellation()
                return Int(response.status.code)
            }
            group.addTask {
                try await Task.sleep(for: deadline)
                return nil
            }
            defer { group.cancelAll() }
            let first = try await group.next() ?? nil
            try Task.checkCancellation()
            return first
        }
    }

    /// The endpoint did not finish its answer within the exchange's deadline.
    struct Timeout: Error, CustomStringConvertible {
        var deadline: Duration
        var description: String {
            let (seconds, attoseconds) = deadline.components
            return attoseconds == 0
                ? "no complete answer within \(seconds) s"
                : "no complete answer within \(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
        }
    }
}
