import Synchronization

/// Paces requests to a steady rate with a token bucket, so that a run stays under Apple's
/// per-app limits (enforced hourly, but a burst is what earns a 429).
///
/// Each caller reserves the next slot under a lock and sleeps outside it, so waiters never
/// block each other and the order of arrival is the order of departure. Up to `burst`
/// requests may go at once after a quiet spell; after that, one per `1 / rate` seconds.
public final class RequestPacer: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// Requests per second.
    public let rate: Double
    /// Requests that may leave at once after a quiet spell.
    public let burst: Double
    private let bucket: Mutex<Bucket>

    /// Creates a pacer; `rate` is requests per second (at least one per hour), `burst` at least 1.
    public init(rate: Double, burst: Double = 1) {
        self.rate = max(rate, 1.0 / 3600)
        self.burst = max(1, burst)
        bucket = Mutex(Bucket(tokens: max(1, burst), updated: .now))
    }

    /// Waits until the caller may send one request. A cancelled waiter throws
    /// `CancellationError`; its slot is not given back, which only ever slows the others.
    public func waitForTurn() async throws {
        let wait = reserve(now: .now)
        if wait > .zero { try await Task.sleep(for: wait) }
    }

    /// Takes one token, letting the bucket go into debt; the debt is the caller's wait.
    func reserve(now: ContinuousClock.Instant) -> Duration {
        bucket.withLock { bucket in
            let elapsed = now > bucket.updated ? (now - bucket.updated).seconds : 0
            bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
            bucket.updated = max(now, bucket.updated)
            bucket.tokens -= 1
            guard bucket.tokens < 0 else { return .zero }
            return .nanoseconds(Int64((-bucket.tokens / rate * 1e9).rounded(.up)))
        }
    }
}
