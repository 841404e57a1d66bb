import ArgumentParser
import Foundation
import Logging
import Reconciliation

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

    /// Runs a command's work with its logger; an error ends the command with its exit status
    /// (SPEC section 7), told in one line by ``report(_:logger:)``.
    func run<Result>(label: String = "reconcile", _ work: (Logger) async throws -> Result) async throws -> Result {
        let logger = makeLogger(label: label)
        do {
            return try await work(logger)
        } catch {
            throw report(error, logger: logger)
        }
    }
}

/// `--config`: a JSON or YAML file of settings, under the environment (which wins).
struct ConfigFileOptions: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help: "A JSON or YAML file with the same keys as the environment variables (the environment wins).")
    var file: String?

    /// The settings: the environment, else the file's.
    func settings(requireBundleIDs: Bool = true) async throws -> Settings {
        try await ConfigurationLoader.settings(configFile: file, requireBundleIDs: requireBundleIDs)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension TimeExpression {
    /// The checks a command's `--since` and `--until` get (`run`, `insights`, `notifications sync`):
    /// each a date, an RFC 3339 timestamp or a duration back from now, and the start before the end.
    static func validateSpan(since: String?, until: String?, now: Date = Date()) throws {
        if let since, instant(since, now: now) == nil {
            throw ValidationError("--since \(since) is not a date, an RFC 3339 timestamp or a duration such as 36h")
        }
        if let until, instant(until, now: now) == nil {
            throw ValidationError("--until \(until) is not a date, an RFC 3339 timestamp or a duration such as 36h")
        }
        if let since, let until, let start = instant(since, now: now), let end = instant(until, now: now), start >= end {
            throw ValidationError("--since must be before --until")
        }
    }
}

/// Exit statuses of SPEC section 7.
enum ExitStatus {
    static let failed = ExitCode(1)
    static let findings = ExitCode(2)
    static let locked = ExitCode(3)
    static let usage = ExitCode(64)

    /// The status an error ends a command with: the one place errors map to exit codes.
    static func code(for error: any Error) -> ExitCode {
        switch error {
        case let code as ExitCode: code
        case is RunLockedError: locked
        case is ConfigurationError, is RunConfigurationError, is PolicyFileError: usage
        case DeskError.appleUnanswered, DeskError.googleUnanswered: failed
        case is DeskError: usage
        case ReviewError.invalidInput: usage
        default: failed
        }
    }

    /// Answers a person expects (a lock held, a decision refused, bad input): told in one line,
    /// not logged as a failure.
    static func isExpected(_ error: any Error) -> Bool {
        error is RunLockedError || error is RunConfigurationError || error is DeskError || error is ReviewError
            || error is PolicyFileError
    }
}

/// Prints a one-line error to standard error and returns the exit status to leave with.
func report(_ error: any Error, logger: Logger) -> ExitCode {
    if let code = error as? ExitCode { return code }
    FileHandle.standardError.write(Data("reconcile: \(error)\n".utf8))
    if !ExitStatus.isExpected(error) { logger.error("command failed", metadata: ["error": "\(error)"]) }
    return ExitStatus.code(for: error)
}

/// A configuration problem the operator must fix (exit 64).
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
