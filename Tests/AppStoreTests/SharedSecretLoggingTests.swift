import AppStoreSimulator
import Foundation
import Logging
import Synchronization
import Testing

@testable import AppStore

/// Collects every log event, rendered with its metadata, for assertions.
final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger at `trace` writing here, without touching the process-wide `LoggingSystem`.
    func logger(label: String = "capture") -> Logger {
        Logger(label: label) { label in
            var handler = CapturingLogHandler(label: label, sink: self)
            handler.logLevel = .trace
            return handler
        }
    }
}

struct CapturingLogHandler: LogHandler {
    let label: String
    let sink: CapturedLog
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        sink.append("\(event.level) \(event.message) \(all) \(event.source) \(event.file)")
    }
}

@Suite struct SharedSecretLoggingTests {
    static let secret = "ssh-do-not-log-0f9e8d7c6b5a"

    @Test func theSecretNeverAppearsInLogsOnAnyPath() async throws {
        let log = CapturedLog()
        try await withSimulator(sharedSecret: Self.secret) { sim in
            let production = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let sandbox = try sim.simulator.issueReceipt(.sample(.sandbox)).receiptData
            let logger = log.logger()
            try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, sharedSecret: Self.secret, maxAttempts: 2)
            ) { client in
                _ = try await client.verify(receiptData: production, logger: logger)
                _ = try await client.verify(receiptData: sandbox, logger: logger)
                try await SimulatorAdmin.setFaults(sim, #"{"http_503_share": 1, "requests": 1}"#)
                _ = try await client.verify(receiptData: production, logger: logger)
                try await SimulatorAdmin.setFaults(sim, #"{"malformed_share": 1}"#)
                _ = try await client.verify(receiptData: production, logger: logger)
                try await SimulatorAdmin.setFaults(sim, "{}")
            }
            // A wrong secret: the error and its log must not echo either secret.
            let wrong = "wrong-\(Self.secret)"
            do {
                _ = try await VerifyReceiptClient.withClient(
                    configuration: fastClientConfiguration(sim, sharedSecret: wrong)
                ) { try await $0.verify(receiptData: production, logger: logger) }
                Issue.record("expected a configuration error")
            } catch let error as VerifyReceiptConfigurationError {
                #expect(!"\(error)".contains(Self.secret))
                logger.error("stopping", metadata: ["error": "\(error)"])
            }
        }
        let lines = log.all
        #expect(lines.count >= 5, "the paths above do log: \(lines.count) lines")
        #expect(lines.contains { $0.contains("apple.status") })
        for line in lines {
            #expect(!line.contains(Self.secret), "leaked in: \(line)")
        }
    }

    @Test func configurationDescriptionsRedactTheSecret() {
        let configuration = VerifyReceiptClient.Configuration(sharedSecret: AppleSharedSecret(Self.secret))
        #expect(!"\(configuration)".contains(Self.secret))
        #expect(!String(reflecting: configuration).contains(Self.secret))
        #expect("\(AppleSharedSecret(Self.secret))" == "<redacted>")
    }
}
