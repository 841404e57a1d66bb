import Foundation
import Hummingbird

/// A simulator listening on a port, as handed to the body of ``AppStoreSimulator/withRunning(_:)``.
public struct RunningSimulator: Sendable {
    /// The simulator.
    public let simulator: AppStoreSimulator
    /// The bound port.
    public let port: Int

    /// `http://host:port`.
    public var baseURL: String { "http://\(simulator.configuration.host):\(port)" }
    /// Production verifyReceipt (`APPLE_VERIFY_RECEIPT_URL`).
    public var productionURL: String { baseURL + "/verifyReceipt" }
    /// Sandbox verifyReceipt (`APPLE_VERIFY_RECEIPT_SANDBOX_URL`).
    public var sandboxURL: String { baseURL + "/sandbox/verifyReceipt" }
    /// Production Server API base URL (`APPSTORE_API_URL`).
    public var serverAPIURL: String { baseURL }
    /// Sandbox Server API base URL (`APPSTORE_API_SANDBOX_URL`).
    public var serverAPISandboxURL: String { baseURL + "/sandbox" }
}

extension AppStoreSimulator {
    /// The simulator could not start listening.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// Runs the simulator in this process for the duration of `body` (tests, benchmarks), then
    /// stops it.
    public func withRunning<T: Sendable>(_ body: (RunningSimulator) async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = buildApplication { port in
            portSink.yield(port)
            portSink.finish()
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Ends the port stream when the server stops, so a failed start is not a hang.
                defer { portSink.finish() }
                try await application.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.next()
                throw StartError(description: "appstore-sim stopped before it listened")
            }
            do {
                let result = try await body(RunningSimulator(simulator: self, port: port))
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }
}
