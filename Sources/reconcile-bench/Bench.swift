import ArgumentParser
import Foundation

/// The measuring half of `scripts/bench` (SPEC section 12): generates the history and measures
/// what is best measured in process. The script runs `reconcile` itself as a separate process,
/// as cron would, and compares with Apple's Python library.
///
/// Results go to standard output as `name: value` lines; progress goes to standard error.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile-bench",
        abstract: "Benchmark helpers for scripts/bench (not part of the reconcile product).",
        subcommands: [
            GenerateCommand.self, FullJoinCommand.self, VerifyReceiptCommand.self, JWSCommand.self,
            ReceiptsCommand.self, NightCommand.self, DeskCommand.self, ReceiverCommand.self, BulkCommand.self,
            PlaySignaturesCommand.self, PlayAPICommand.self, PlaySettingsCommand.self,
        ])

    /// Prints one result line.
    static func emit(_ name: String, _ value: String) {
        FileHandle.standardOutput.write(Data("\(name): \(value)\n".utf8))
    }

    /// Prints progress for the person waiting.
    static func log(_ message: String) {
        FileHandle.standardError.write(Data("reconcile-bench: \(message)\n".utf8))
    }

    /// CPU time this process has used, user and system, in seconds. A rate per CPU second is a
    /// rate per core however busy the machine is with other work.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Runs `body(0)` … `body(count - 1)` each on a thread of its own and returns when all have:
    /// blocking database work that must really run at once, which Swift's concurrency pool (a
    /// thread per core) would not do on a 2-core machine.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        Thread { continuation.resume(with: Result { try body(index) }) }.start()
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Seconds with three decimals.
    static func seconds(_ value: TimeInterval) -> String { String(format: "%.3f", value) }

    /// A rate or ratio with one decimal.
    static func decimal(_ value: Double) -> String { String(format: "%.1f", value) }
}
