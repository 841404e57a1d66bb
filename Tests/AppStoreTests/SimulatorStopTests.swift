import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Synchronization
import Testing

/// The simulator run in a test's process stops gracefully: a clean stop logs no error (it logged
/// `Waiting on child channel: CancellationError()` and `Server shutdown error: Already closed` at
/// the end of every test run), and a stop during a fault's hang does not wait the hang out.
@Suite struct SimulatorStopTests {
    @Test func aCleanStopLogsNoError() async throws {
        let records = LevelRecords()
        let simulator = try AppStoreSimulator(configuration: .init(logger: records.logger()))
        try await simulator.withRunning { sim in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: receipt, logger: silentLogger)
            }
            guard case .verified = outcome else {
                Issue.record("expected verified, got \(outcome)")
                return
            }
        }
        let errors = records.entries.filter { $0.level >= .error }.map(\.message)
        #expect(errors.isEmpty, "a clean stop logged \(errors)")
    }

    @Test func aStopDuringAStalledAnswerEndsItAtOnce() async throws {
        // The stall and the grace are long so that waiting for either is far from any slowness of
        // a loaded machine: CI once took 14 s from the simulator's start, with a 10 s grace, to
        // the end of its stop with every suite running beside it.
        let simulator = try AppStoreSimulator(
            configuration: .init(
                faults: .init(hangMilliseconds: 600_000, stalledBodyShare: 1), logger: silentLogger,
                stopGrace: .seconds(120)))
        let stopping = Mutex<ContinuousClock.Instant?>(nil)
        // A client that waits past the stop: the stalled answer is still in flight when it comes.
        let request = try await simulator.withRunning {
            (sim: RunningSimulator) async throws -> Task<VerifyReceiptOutcome, any Error> in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let request = Task {
                try await VerifyReceiptClient.withClient(
                    configuration: fastClientConfiguration(sim, maxAttempts: 1, timeout: .seconds(900))
                ) { try await $0.verify(receiptData: receipt, logger: silentLogger) }
            }
            while sim.simulator.state.stats.verifyReceiptRequests == 0 { try await Task.sleep(for: .milliseconds(10)) }
            stopping.withLock { $0 = .now }
            return request
        }
        let stopped = try #require(stopping.withLock { $0 }).duration(to: .now)
        // Not the stall, nor the grace the stop grants answers in flight before cancelling them.
        #expect(stopped < .seconds(60), "the stop waited for the stalled answer")
        guard case .retryLater = try await request.value else {
            Issue.record("a stopped simulator's stalled answer is not an answer")
            return
        }
    }
}

/// Keeps the level and message of every entry logged through its loggers.
final class LevelRecords: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
    }

    private let stored = Mutex<[Entry]>([])

    var entries: [Entry] { stored.withLock { $0 } }

    func logger() -> Logger {
        Logger(label: "appstore-sim") { _ in Handler(records: self) }
    }

    struct Handler: LogHandler {
        let records: LevelRecords
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            records.stored.withLock { $0.append(Entry(level: event.level, message: "\(event.message)")) }
        }
    }
}
