import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1

/// One request and its whole answer, head and body, within one deadline (SPEC section 11): a peer
/// that answers its head and then trickles the body, or stops after a byte, is cut off by it too.
/// `HTTPClient.execute(_:timeout:)` alone bounds only the wait for the head, after which
/// `body.collect` waits as long as the connection stays open. Apple's clients (verifyReceipt, the
/// Server API), the outbox webhook, the forwarder and the preflight all exchange through here.
public enum HTTPExchange {
    /// An answer read to its end.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: ByteBuffer
    }

    /// The whole answer, its body at most `limit` bytes (more throws NIO's `NIOTooManyBytesError`).
    /// Throws ``Timeout`` when it did not all come within `deadline`, and `CancellationError` at
    /// once when the task is cancelled.
    public static func exchange(
        _ request: HTTPClientRequest, within deadline: Duration, upTo limit: Int, http: HTTPClient,
        logger: Logger? = nil
    ) async throws -> Answer {
        let answer = try await race(deadline) {
            let response = try await http.execute(request, timeout: timeAmount(deadline), logger: logger)
            let body = try await response.body.collect(upTo: limit)
            return Answer(status: Int(response.status.code), headers: response.headers, body: body)
        }
        guard let answer else { throw Timeout(deadline: deadline) }
        return answer
    }

    /// The answer's status, or nil when the whole answer did not come within `deadline`: for an
    /// endpoint the job does not control (the outbox webhook, the app's notification endpoint),
    /// whose body says nothing. At most 64 KB of it is read (and dropped), so that the connection
    /// ends cleanly. Cancellation ends the wait at once.
    public static func send(_ request: HTTPClientRequest, within deadline: Duration, http: HTTPClient) async throws
        -> Int?
    {
        try await race(deadline) {
            let response = try await http.execute(request, timeout: timeAmount(deadline))
            var read = 0
            for try await chunk in response.body {
                read += chunk.readableBytes
                if read > 1 << 16 { break }
            }
            return Int(response.status.code)
        }
    }

    /// `work`'s result, or nil when `deadline` passed first (`work` is then cancelled).
    private static func race<T: Sendable>(_ deadline: Duration, _ work: @escaping @Sendable () async throws -> T)
        async throws -> T?
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                let result = try await work()
                try Task.checkCancellation()
                return result
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

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The endpoint did not finish its answer within the exchange's deadline.
    public struct Timeout: Error, CustomStringConvertible {
        public var deadline: Duration

        public init(deadline: Duration) {
            self.deadline = deadline
        }

        public var description: String {
            let (seconds, attoseconds) = deadline.components
            return attoseconds == 0
                ? "no complete answer within \(seconds) s"
                : "no complete answer within \(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
        }
    }
}
