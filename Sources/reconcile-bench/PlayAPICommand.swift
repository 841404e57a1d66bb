import AppStoreSimulator
import ArgumentParser
import AsyncHTTPClient
import Foundation
import GooglePlay
import Logging

/// `reconcile-bench play-api`: Google Play Developer API verification at 20 ms latency (SPEC
/// section 12): the job's client asking `productsv2` for distinct purchases one at a time, then
/// with the job's requests in flight and the rate set high, then at a set rate, whose pace it
/// must never exceed. The simulator runs in this process on loopback, its answers a lookup.
struct PlayAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play-api", abstract: "Play Developer API throughput: one at a time versus the job's client.")

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "Purchases asked one at a time.")
    var sequential = 100

    @Option(help: "Purchases asked by the concurrent client.")
    var concurrent = 2000

    @Option(help: "Requests in flight for the concurrent client (RECONCILE_CONCURRENCY).")
    var concurrency = 64

    @Option(help: "The paced measurement's GOOGLE_PLAY_API_RATE (requests a second).")
    var pacedRate = 50.0

    @Option(help: "Purchases asked at the paced rate.")
    var paced = 200

    @Option(help: "Latency the simulator adds to every answer, milliseconds.")
    var latency = 20

    static let package = "com.example.coins.android"

    func run() async throws {
        let simulator = try AppStoreSimulator(configuration: .init(
            stateDirectory: sim.directory, faults: SimulatorFaults(play: PlaySimulatorFaults(latencyMilliseconds: latency)),
            playPackageNames: [Self.package]))
        let tokens = try (0..<max(sequential, concurrent, paced)).map { index in
            var request = PlayPurchaseRequest(
                packageName: Self.package, productId: BenchWorld.consumables[index % BenchWorld.consumables.count].0,
                obfuscatedAccountId: "user-\(index)", acknowledged: true)
            request.purchaseToken = "bench-api-\(index)-" + String(repeating: "y", count: 100)
            return try simulator.play.createPurchase(request).purchaseToken
        }
        let logger = Logger(label: "reconcile-bench")
        try await simulator.withRunning { running in
            let settings = try await running.playSettings()
            let key = try PlayServiceAccountKey(json: settings.serviceAccountJSON)
            func measure(rate: Double, inFlight: Int, _ tokens: ArraySlice<String>) async throws -> Double {
                let configuration = PlayDeveloperAPIClient.Configuration(
                    baseURL: settings.apiURL, rate: rate, maxConcurrentRequests: inFlight)
                let http = PlayDeveloperAPIClient.makeHTTPClient(configuration: configuration)
                do {
                    let client = PlayDeveloperAPIClient(
                        configuration: configuration, tokens: PlayAccessTokenProvider(key: key, httpClient: http),
                        httpClient: http)
                    // The access token and the first connection, outside the measurement.
                    try await Self.ask(client, tokens[tokens.startIndex], logger: logger)
                    let started = ContinuousClock.now
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        var next = tokens.startIndex
                        // As the job's verification does: a bounded number of tasks, never one per purchase.
                        for _ in 0..<min(inFlight, tokens.count) {
                            let token = tokens[next]
                            next += 1
                            group.addTask { try await Self.ask(client, token, logger: logger) }
                        }
                        while try await group.next() != nil, next < tokens.endIndex {
                            let token = tokens[next]
                            next += 1
                            group.addTask { try await Self.ask(client, token, logger: logger) }
                        }
                        try await group.waitForAll()
                    }
                    let rate = Double(tokens.count) / (ContinuousClock.now - started).seconds
                    try await http.shutdown()
                    return rate
                } catch {
                    try? await http.shutdown()
                    throw error
                }
            }
            let one = try await measure(rate: 100_000, inFlight: 1, tokens.prefix(sequential))
            Bench.emit("play_api_one_at_a_time_per_second", Bench.decimal(one))
            let many = try await measure(rate: 100_000, inFlight: concurrency, tokens.prefix(concurrent))
            Bench.emit("play_api_client_concurrency", "\(concurrency)")
            Bench.emit("play_api_client_per_second", Bench.decimal(many))
            Bench.emit("play_api_client_vs_one_at_a_time", Bench.decimal(many / one))
            let pacedRate = try await measure(rate: self.pacedRate, inFlight: concurrency, tokens.prefix(paced))
            Bench.emit("play_api_paced_rate_setting", Bench.decimal(self.pacedRate))
            Bench.emit("play_api_paced_per_second", Bench.decimal(pacedRate))
        }
    }

    /// A measurement that silently counted failures would flatter the client: stop instead.
    static func ask(_ client: PlayDeveloperAPIClient, _ token: String, logger: Logger) async throws {
        let outcome = try await client.productPurchase(packageName: package, token: token, logger: logger)
        guard case .found = outcome else { throw ValidationError("the simulator did not answer a bench purchase: \(outcome)") }
    }
}
