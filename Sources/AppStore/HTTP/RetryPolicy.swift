import Foundation

/// Exponential backoff with jitter between attempts of one call to Apple: the policy of the
/// verifyReceipt and App Store Server API clients alike.
public struct RetryPolicy: Sendable {
    /// Attempts per call, the first included (routing to the other environment is not counted).
    public var maxAttempts: Int
    /// The wait before the second attempt, before jitter.
    public var initialBackoff: Duration
    /// The longest wait, before jitter.
    public var maxBackoff: Duration
    /// Growth of the wait per attempt.
    public var multiplier: Double

    /// Creates a policy; defaults suit a nightly batch job against Apple.
    public init(
        maxAttempts: Int = 4, initialBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(10),
        multiplier: Double = 2
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.multiplier = multiplier
    }

    /// The wait after failed attempt `attempt` (1-based): half the exponential delay fixed,
    /// half random ("equal jitter"), so that many uploads failing together do not retry in
    /// lock step, and the wait never collapses to zero.
    public func backoff(afterAttempt attempt: Int) -> Duration {
        let base = initialBackoff.seconds * pow(multiplier, Double(max(0, attempt - 1)))
        let capped = min(base, maxBackoff.seconds)
        let jittered = capped / 2 + Double.random(in: 0...(capped / 2))
        return .milliseconds(Int64((jittered * 1000).rounded()))
    }
}

extension Duration {
    /// The duration in seconds, fractions kept.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole milliseconds.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
