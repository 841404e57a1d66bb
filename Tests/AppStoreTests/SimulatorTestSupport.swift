import AppStore
import AppStoreSimulator
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// Starts a simulator in this process on a free port for one test.
func withSimulator<T: Sendable>(
    sharedSecret: String? = nil, faults: SimulatorFaults = .none,
    _ body: (RunningSimulator) async throws -> T
) async throws -> T {
    var logger = Logger(label: "appstore-sim-test")
    logger.logLevel = .critical
    let simulator = try AppStoreSimulator(
        configuration: .init(sharedSecret: sharedSecret, faults: faults, logger: logger))
    return try await simulator.withRunning(body)
}

/// A client aimed at the simulator with test-sized timeouts and backoff.
/// The default deadline is long: CI runs every suite at once on two cores, where a healthy
/// answer can take seconds, and a test that is not about deadlines must not retry on one. Tests of
/// deadlines name theirs.
func fastClientConfiguration(
    _ sim: RunningSimulator, sharedSecret: String? = nil, maxAttempts: Int = 3, timeout: Duration = .seconds(30),
    concurrency: Int = 16
) -> VerifyReceiptClient.Configuration {
    VerifyReceiptClient.Configuration(
        productionURL: sim.productionURL, sandboxURL: sim.sandboxURL,
        sharedSecret: sharedSecret.map(AppleSharedSecret.init), requestTimeout: timeout,
        retry: .init(maxAttempts: maxAttempts, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20)),
        maxConcurrentRequests: concurrency)
}

/// A logger that drops everything, for tests that do not look at logs.
let silentLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

extension SimulatedReceipt {
    /// A receipt with one consumable bought a day ago.
    static func sample(_ environment: Environment, bundleID: String = "com.example.coins") -> SimulatedReceipt {
        SimulatedReceipt(
            bundleID: bundleID, environment: environment,
            purchases: [
                .init(
                    productID: "coins_100", transactionID: "2000000000000001",
                    purchaseDate: Date(timeIntervalSince1970: 1_763_800_000), quantity: 2),
                .init(
                    productID: "vip_month", transactionID: "2000000000000002", originalTransactionID: "2000000000000000",
                    purchaseDate: Date(timeIntervalSince1970: 1_763_700_000),
                    expiresDate: Date(timeIntervalSince1970: 1_766_300_000),
                    cancellationDate: Date(timeIntervalSince1970: 1_763_750_000), webOrderLineItemID: 2_000_000_000_000_100),
            ])
    }
}

/// Plain HTTP to the simulator's admin endpoints.
enum SimulatorAdmin {
    static func setFaults(_ sim: RunningSimulator, _ json: String) async throws {
        _ = try await send(sim, "POST", "/sim/faults", json)
    }

    static func stats(_ sim: RunningSimulator) async throws -> SimulatorStats {
        try JSONDecoder().decode(SimulatorStats.self, from: try await send(sim, "GET", "/sim/stats", nil).body)
    }

    static func send(_ sim: RunningSimulator, _ method: String, _ path: String, _ body: String?) async throws
        -> (status: Int, body: Data)
    {
        var request = HTTPClientRequest(url: sim.baseURL + path)
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), Data(bytes.readableBytesView))
    }
}
