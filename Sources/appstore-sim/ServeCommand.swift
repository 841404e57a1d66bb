import AppStoreSimulator
import ArgumentParser
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve verifyReceipt (production and sandbox) and the simulator's admin endpoints.",
        discussion: """
            Production verifyReceipt is POST /verifyReceipt, the sandbox POST /sandbox/verifyReceipt, on the same \
            port. Admin: POST /sim/receipts (issue a receipt), GET|POST|DELETE /sim/faults, GET|DELETE /sim/stats, \
            GET /sim/root.pem. Shares are probabilities from 0 to 1.
            """
    )

    @OptionGroup var state: StateOptions

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free one.")
    var port = 8090

    @Option(name: .customLong("port-file"), help: "Write the bound port to this file once listening.")
    var portFile: String?

    @Option(
        name: .customLong("shared-secret"),
        help: "Answer 21004 unless the request's password is this (default: $APPSTORE_SIM_SHARED_SECRET).")
    var sharedSecret: String?

    @Option(name: .customLong("latency-ms"), help: "Delay added to every verifyReceipt answer.")
    var latencyMilliseconds = 0

    @Option(name: .customLong("hang-share"), help: "Share of requests that hang for --hang-ms.")
    var hangShare = 0.0

    @Option(name: .customLong("hang-ms"), help: "How long a hang lasts.")
    var hangMilliseconds = 60_000

    @Option(name: .customLong("http-503-share"), help: "Share of requests answered HTTP 503.")
    var http503Share = 0.0

    @Option(name: .customLong("malformed-share"), help: "Share of requests answered with truncated JSON.")
    var malformedShare = 0.0

    @Option(name: .customLong("status-21005-share"), help: "Share of requests answered 21005.")
    var status21005Share = 0.0

    @Option(name: .customLong("status-21100-retryable-share"), help: "Share answered 21100 with is_retryable true.")
    var status21100RetryableShare = 0.0

    @Option(name: .customLong("status-21100-share"), help: "Share answered 21100 with is_retryable false.")
    var status21100Share = 0.0

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error.")
    var logLevel = "info"

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let faults = SimulatorFaults(
            latencyMilliseconds: latencyMilliseconds, hangShare: hangShare, hangMilliseconds: hangMilliseconds,
            http503Share: http503Share, malformedShare: malformedShare, status21005Share: status21005Share,
            status21100RetryableShare: status21100RetryableShare, status21100Share: status21100Share)
        let configuration = SimulatorConfiguration(
            host: host, port: port, stateDirectory: state.url,
            sharedSecret: sharedSecret ?? ProcessInfo.processInfo.environment["APPSTORE_SIM_SHARED_SECRET"],
            faults: faults, logger: Logger(label: "appstore-sim"))
        let simulator = try AppStoreSimulator(configuration: configuration)
        let rootPath = simulator.rootCertificatePath ?? "-"
        let host = self.host
        let portFile = self.portFile
        let application = simulator.buildApplication { port in
            // Written unbuffered: scripts read this output to learn the port.
            let banner = """
                appstore-sim listening on http://\(host):\(port)
                  production verifyReceipt: POST http://\(host):\(port)/verifyReceipt
                  sandbox verifyReceipt:    POST http://\(host):\(port)/sandbox/verifyReceipt
                  trust root certificate:   APPLE_ROOT_CERTIFICATES=\(rootPath)

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
            if let portFile { try? "\(port)\n".write(toFile: portFile, atomically: true, encoding: .utf8) }
        }
        // SIGTERM/SIGINT cancel the server outright rather than shutting it down gracefully:
        // a graceful shutdown would wait out every injected hang (a minute by default).
        let server = Task { try await application.run() }
        let signalSources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { server.cancel() }
            source.resume()
            return source
        }
        defer { signalSources.forEach { $0.cancel() } }
        do {
            try await server.value
        } catch is CancellationError {
            // Stopped by a signal.
        }
    }
}
