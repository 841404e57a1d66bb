import Logging
import ServiceLifecycle
import Synchronization

/// SIGTERM and SIGINT cancel the run's task: it stops taking new work, the batch in flight is
/// rolled back or finished, the run is recorded as interrupted, and the process exits non-zero.
/// The signals are swift-service-lifecycle's: the work runs as the one service of a
/// `ServiceGroup` whose cancellation signals they are, as `reconcile serve` and the simulator
/// run their servers.
enum ShutdownSignals {
    static func cancellingOnSignal<T: Sendable>(
        logger: Logger, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let work = Work(body)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: work, successTerminationBehavior: .gracefullyShutdownGroup)],
                cancellationSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        // The group ends when the work returns or throws (it rethrows the work's error, a
        // `CancellationError` after a signal); without an outcome it was cancelled before it ran.
        guard let value = work.outcome.withLock({ $0 }) else { throw CancellationError() }
        return value
    }

    /// The work as a service: runs once, keeps what it returned.
    private final class Work<T: Sendable>: Service {
        let body: @Sendable () async throws -> T
        let outcome = Mutex<T?>(nil)

        init(_ body: @escaping @Sendable () async throws -> T) {
            self.body = body
        }

        func run() async throws {
            let value = try await body()
            outcome.withLock { $0 = value }
        }
    }
}
