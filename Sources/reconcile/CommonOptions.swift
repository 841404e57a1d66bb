import ArgumentParser
import Foundation
import Logging

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("log-format"), help: "Log format: logfmt or json.")
    var logFormat: LogFormat = .logfmt

    @Option(name: .customLong("log-level"), help: "Lowest level logged: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .info

    /// Sets up logging once for the process and returns the command's logger.
    func makeLogger(label: String = "reconcile") -> Logger {
        LoggingBootstrap.bootstrap(format: logFormat, level: logLevel)
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Exit statuses of SPEC section 7.
enum ExitStatus {
    static let failed = ExitCode(1)
    static let findings = ExitCode(2)
    static let locked = ExitCode(3)
    static let usage = ExitCode(64)
}

/// Prints a one-line error to standard error and returns the exit code to leave with.
func report(_ error: any Error, logger: Logger) -> ExitCode {
    FileHandle.standardError.write(Data("reconcile: \(error)\n".utf8))
    logger.error("command failed", metadata: ["error": "\(error)"])
    return error is ConfigurationError ? ExitStatus.usage : ExitStatus.failed
}

/// A configuration problem the operator must fix (exit 64).
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
