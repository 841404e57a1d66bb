import Synchronization

/// Bounds how many operations run at once: at most `limit` callers hold a permit; the others wait
/// in FIFO order. Cancellation-safe: a waiter whose task is cancelled leaves the queue and throws
/// `CancellationError` without taking or leaking a permit.
public final class ConcurrencyLimiter: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
    }

    private let state: Mutex<State>
    /// The number of permits.
    public let limit: Int

    /// Creates a limiter with `limit` permits (at least 1).
    public init(limit: Int) {
        self.limit = max(1, limit)
        state = Mutex(State(available: max(1, limit)))
    }

    /// Runs `body` while holding a permit, waiting for one first.
    public func withPermit<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// Waits for a permit. Throws `CancellationError` if the task is cancelled while waiting.
    public func acquire() async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    // The cancellation flag is set before the handler runs; checking it under the
                    // lock closes the window where the handler ran before this waiter was queued.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.available > 0 {
                        state.available -= 1
                        return .success(())
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns a permit, handing it straight to the longest waiter if there is one.
    public func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.available = min(state.available + 1, limit)
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }

    /// Permits free right now (for tests and progress reporting).
    public var availablePermits: Int { state.withLock { $0.available } }
}
