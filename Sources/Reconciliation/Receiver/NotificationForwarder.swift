import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import Postgres

/// Forwards every notification the receiver stored to the app's own endpoint
/// (`RECONCILE_NOTIFICATION_FORWARD_URL`), exactly as Apple posted it, at least once, from the
/// durable queue `reconcile.notification_forwards` (SPEC section 16). A studio can point Apple at
/// the receiver and its endpoint loses nothing: while the endpoint is down its copies wait, and
/// Apple's 200 never does.
///
/// Each row is claimed in a statement of its own that leases it (`next_attempt_at`, longer than
/// one exchange), then POSTed with no row lock or transaction held, then its outcome recorded in
/// another short statement — the outbox webhook's pattern (``ActionOutbox``). A receiver killed
/// mid-send sends the row again when the lease ends: the app may get a copy twice, and dedupes
/// on `notificationUUID` as it must for Apple's own retries.
public struct NotificationForwarder: Sendable {
    /// Where and how copies are sent.
    public struct Endpoint: Sendable {
        public var url: String
        /// One exchange, head and body, within this.
        public var timeout: Duration = .seconds(10)
        /// The wait after the first failed attempt; it doubles per attempt up to `longestWait`.
        public var firstWait: Duration = .seconds(30)
        public var longestWait: Duration = .seconds(3600)
        /// The most rows one pass sends (the rest wait for the next pass).
        public var rowsPerPass = 100

        public init(url: String) { self.url = url }

        /// How long a claimed row is left to its pass: twice one exchange's deadline, so that no
        /// other pass sends it while this one may still be sending, and a pass killed mid-send
        /// leaves it for only that long.
        var lease: Duration { timeout * 2 + .seconds(1) }

        /// The wait before the attempt after `attempts` failed ones.
        func wait(afterAttempts attempts: Int) -> Duration {
            min(longestWait, firstWait * (1 << min(max(attempts - 1, 0), 20)))
        }
    }

    /// What a pass did.
    public struct Pass: Sendable, Equatable {
        public var forwarded = 0
        public var failed = 0
        public init() {}
    }

    public let endpoint: Endpoint
    let logger: Logger

    public init(endpoint: Endpoint, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
    }

    /// Sends every row due, oldest first, until none is due, the pass's row budget is spent, or
    /// one attempt fails: the endpoint is then likely down, and a pass must not wait out one
    /// deadline per row; the rest wait for the next pass. The receiver runs these passes beside its
    /// own, on a connection of their own (``ReceiverChore``): a slow endpoint delays no judgement.
    public func pass(http: HTTPClient, on connection: Connection) async throws -> Pass {
        var pass = Pass()
        for _ in 0..<endpoint.rowsPerPass {
            try Task.checkCancellation()
            guard let row = try connection.queryFirst(
                ReceiverSQL.claimForward, ["lease_seconds": Self.seconds(endpoint.lease)])
            else { break }
            let id = try row.decode(Int64.self, "notification_id")
            let attempts = try row.decode(Int.self, "attempts")
            let body = try row.decode(String.self, "body")
            Failpoint.pass("receiver.forward")
            var status: Int?
            var failure: String?
            do {
                status = try await exchange(body, http: http)
                if let code = status, !(200..<300).contains(code) { failure = "HTTP \(code)" }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try Task.checkCancellation()
                failure = "\(error)"
            }
            let delivered = failure == nil
            try connection.execute(
                ReceiverSQL.forwardAttempted,
                ["notification_id": id, "delivered": delivered, "status": status, "error": failure,
                 "retry_seconds": Self.seconds(endpoint.wait(afterAttempts: attempts + 1))])
            if delivered {
                pass.forwarded += 1
            } else {
                pass.failed += 1
                logger.notice("notification not forwarded; it waits for its next attempt", metadata: [
                    "notification.id": "\(id)", "attempt": "\(attempts + 1)", "error": "\(failure ?? "")",
                ])
                break
            }
        }
        return pass
    }

    /// One POST and its whole answer, head and body, within the endpoint's deadline.
    private func exchange(_ body: String, http: HTTPClient) async throws -> Int {
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(Data(body.utf8))
        guard let status = try await HTTPExchange.send(request, within: endpoint.timeout, http: http) else {
            throw HTTPExchange.Timeout(deadline: endpoint.timeout)
        }
        return status
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
