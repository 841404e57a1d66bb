import Foundation
import Postgres

/// One row of `reconcile.runs`, for the runs list.
public struct RunSummary: Sendable {
    /// The row id.
    public var id: Int64
    /// Where the run stands.
    public var status: RunStatus
    /// Window start; nil from the beginning.
    public var since: Date?
    /// Window end.
    public var until: Date
    /// The environment whose purchases it counted.
    public var environment: Settings.Environment
    /// A dry run writes no review items.
    public var dryRun: Bool
    /// When it started.
    public var startedAt: Date
    /// When it finished; nil while running.
    public var finishedAt: Date?
    /// Uploads in the window.
    public var uploads: Int
    /// Open findings the run detected.
    public var findingsTotal: Int
    /// Findings first detected by the run.
    public var findingsNew: Int
    /// Where the job wrote the run's report files.
    public var reportDirectory: String?
    /// Why it failed, if it did.
    public var error: String?

    init(row: Row) throws {
        id = try row["id"]
        status = RunStatus(rawValue: try row["status"])
        since = try row["window_since"]
        until = try row["window_until"]
        environment = try row["environment"]
        dryRun = try row["dry_run"]
        startedAt = try row["started_at"]
        finishedAt = try row["finished_at"]
        uploads = try row["uploads_total"]
        findingsTotal = try row["findings_total"]
        findingsNew = try row["findings_new"]
        reportDirectory = try row["report_dir"]
        error = try row["error"]
    }
}
