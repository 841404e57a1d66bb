import Foundation
import Logging
import Postgres

/// One run as each of its stages sees it: which run, its window, what it judges, where it works.
public struct RunContext {
    /// `reconcile.runs.id`.
    public let id: Int64
    /// Window start; nil reconciles the whole history.
    public let since: Date?
    /// Window end.
    public let until: Date
    /// When the run started.
    public let startedAt: Date
    /// Purchases and deliveries younger than this are left for the next run (start − grace).
    public let judgeBefore: Date
    /// The last run that finished (0 for none). The runs after it ended without finishing
    /// (killed, failed, interrupted, dry): the uploads they verified and the transactions they
    /// confirmed are this run's to judge and report, as if it had done that work itself.
    public let resumesAfter: Int64
    /// `--dry-run`: no review items are written.
    public let dryRun: Bool
    /// The run's session (it holds the run lock).
    public let connection: Connection
    /// The job's logger with `run.id` set.
    public let logger: Logger
}

/// Runs a run's stages in order: the one place that times them and logs when each ends. The
/// stage names are the keys of the report's `timings`.
struct StageRunner {
    private(set) var timings: [String: Double] = [:]
    let logger: Logger

    mutating func run<T>(_ stage: String, _ body: () async throws -> T) async throws -> T {
        let started = Date()
        let result = try await body()
        let seconds = Date().timeIntervalSince(started)
        timings[stage] = seconds
        logger.debug("stage finished", metadata: ["stage": "\(stage)", "stage.seconds": "\(seconds)"])
        return result
    }
}
