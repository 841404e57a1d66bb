import Testing

@testable import AppStore

@Suite struct RetryPolicyTests {
    static let policy = RetryPolicy(
        maxAttempts: 6, initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(1_000), multiplier: 2)

    /// (attempt, exponential delay before jitter): 100, 200, 400, 800, then the 1 s cap.
    @Test(arguments: [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1_000), (9, 1_000)])
    func backoffGrowsExponentiallyWithinHalfToFullOfTheCappedDelay(attempt: Int, delayMilliseconds: Int64) {
        for _ in 0..<200 {
            let wait = Self.policy.backoff(afterAttempt: attempt).milliseconds
            #expect(wait >= delayMilliseconds / 2 && wait <= delayMilliseconds, "attempt \(attempt): \(wait) ms")
        }
    }

    @Test func backoffIsJittered() {
        let waits = Set((0..<50).map { _ in Self.policy.backoff(afterAttempt: 4).milliseconds })
        #expect(waits.count > 5)
    }

    @Test func atLeastOneAttempt() {
        #expect(RetryPolicy(maxAttempts: 0).maxAttempts == 1)
    }
}
