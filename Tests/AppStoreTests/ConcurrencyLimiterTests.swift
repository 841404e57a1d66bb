import Synchronization
import Testing

@testable import AppStore

@Suite struct ConcurrencyLimiterTests {
    @Test func neverMoreHoldersThanTheLimit() async throws {
        let limiter = ConcurrencyLimiter(limit: 3)
        let counts = Shared((current: 0, peak: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await limiter.withPermit {
                        counts.value.withLock { $0.current += 1; $0.peak = max($0.peak, $0.current) }
                        try await Task.sleep(for: .milliseconds(5))
                        counts.value.withLock { $0.current -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(counts.value.withLock { $0.peak } == 3)
        #expect(limiter.availablePermits == 3)
    }

    @Test func aCancelledWaiterThrowsAndLeaksNoPermit() async throws {
        let limiter = ConcurrencyLimiter(limit: 1)
        try await limiter.acquire()
        let waiter = Task { try await limiter.acquire() }
        try await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        limiter.release()
        #expect(limiter.availablePermits == 1)
        // The permit is usable again, and only once.
        try await limiter.acquire()
        #expect(limiter.availablePermits == 0)
        limiter.release()
    }

    @Test func anAlreadyCancelledTaskDoesNotTakeAPermit() async throws {
        let limiter = ConcurrencyLimiter(limit: 2)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await limiter.acquire()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(limiter.availablePermits == 2)
    }

    @Test func permitsGoToWaitersInArrivalOrder() async throws {
        let limiter = ConcurrencyLimiter(limit: 1)
        try await limiter.acquire()
        let order = Shared<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<3 {
            tasks.append(
                Task {
                    try await limiter.acquire()
                    order.value.withLock { $0.append(index) }
                    limiter.release()
                })
            try await Task.sleep(for: .milliseconds(10))  // queue them in a known order
        }
        limiter.release()
        for task in tasks { try await task.value }
        #expect(order.value.withLock { $0 } == [0, 1, 2])
    }
}

/// A lock-protected value that escaping closures can share (a `Mutex` alone cannot be captured).
final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
}
