import Dispatch
import Foundation

/// SIGTERM and SIGINT cancel the run's task: it stops taking new work, the batch in flight is
/// rolled back or finished, the run is recorded as interrupted, and the process exits non-zero.
enum ShutdownSignals {
    static func cancellingOnSignal<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        let sources = [SIGTERM, SIGINT].map { signalNumber -> DispatchSourceSignal in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        return try await task.value
    }
}
