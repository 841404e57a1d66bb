import Foundation
import Hummingbird
import ServiceLifecycle

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

    /// The job's environment variables that make this simulator its Apple: verifyReceipt, the
    /// Server API with the simulator's key, and the simulator's root as the trusted root.
    public var jobEnvironment: [String: String] {
        var environment = [
            "APPLE_VERIFY_RECEIPT_URL": productionURL, "APPLE_VERIFY_RECEIPT_SANDBOX_URL": sandboxURL,
            "APPSTORE_API_URL": serverAPIURL, "APPSTORE_API_SANDBOX_URL": serverAPISandboxURL,
            "APPSTORE_KEY_ID": simulator.configuration.apiKeyID, "APPSTORE_ISSUER_ID": simulator.configuration.issuerID,
        ]
        environment["APPSTORE_PRIVATE_KEY_FILE"] = simulator.apiPrivateKeyPath
        environment["APPLE_ROOT_CERTIFICATES"] = simulator.rootCertificatePath
        return environment
    }

    /// The settings that make this simulator the job's Google Play (its keys are made on first use).
    public func playSettings() async throws -> PlaySimulatorSettings {
        try await simulator.play.prepareKeys()
        return try simulator.play.settings(baseURL: baseURL)
    }
}

extension AppStoreSimulator {
    /// The simulator could not start listening.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// Runs the simulator in this process for the duration of `body` (tests, benchmarks), then
    /// stops it gracefully: it stops listening, finishes the answers in flight (a hang or a stalled
    /// body the faults act out ends at once), and logs no error for a clean stop. An answer still
    /// running the configuration's `stopGrace` after the stop is cancelled.
    public func withRunning<T: Sendable>(_ body: (RunningSimulator) async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = buildApplication { port in
            portSink.yield(port)
            portSink.finish()
        }
        // Cancelling the application's task stops it too, but Hummingbird logs that as errors
        // ("Waiting on child channel: CancellationError()", "Server shutdown error: Already closed").
        let services = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: configuration.logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Ends the port stream when the server stops, so a failed start is not a hang.
                defer { portSink.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.next()
                throw StartError(description: "appstore-sim stopped before it listened")
            }
            let result: Result<T, any Error>
            do {
                result = .success(try await body(RunningSimulator(simulator: self, port: port)))
            } catch {
                result = .failure(error)
            }
            await services.triggerGracefulShutdown()
            let grace = configuration.stopGrace
            group.addTask { try? await Task.sleep(for: grace) }
            // The server's end, or the grace's: whichever comes first ends the other.
            _ = try? await group.next()
            group.cancelAll()
            return try result.get()
        }
    }
}
