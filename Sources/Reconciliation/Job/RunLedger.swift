import Foundation
import Postgres

/// `reconcile.runs`: one row per run, its window, status, counts, timings and report location.
public enum RunLedger {
    /// A run recorded as running.
    public struct RunningRun: Sendable {
        /// Its id.
        public var id: Int64
        /// When it started.
        public var startedAt: Date
        /// The machine it runs on.
        public var host: String?
        /// Its process id.
        public var pid: Int?
    }

    static func runningRun(on connection: Connection) throws -> RunningRun? {
        try connection.queryFirst(SQL.running).map {
            RunningRun(
                id: try $0.decode(Int64.self, "id"), startedAt: try $0.decode(Date.self, "started_at"),
                host: try $0.decode(String?.self, "host"), pid: try $0.decode(Int?.self, "pid"))
        }
    }

    /// Runs still marked running while we hold the lock died without saying so (kill -9, power loss).
    static func abandonStale(on connection: Connection) throws {
        try connection.execute(SQL.abandonStale)
    }

    /// The last run that finished its work and wrote the queue (0 when none). Every later run
    /// but the one starting ended without finishing (killed, failed, interrupted) or was a dry
    /// run: the next run takes over what they verified and found, to judge and report it.
    static func lastFinishedRun(on connection: Connection) throws -> Int64 {
        try connection.query(SQL.lastFinished)[0].decode(Int64.self, at: 0)
    }

    /// The end of the last successful run's window (dry runs do not count: they wrote no queue).
    static func watermark(on connection: Connection) throws -> Date? {
        try connection.query(SQL.watermark)[0].decode(Date?.self, at: 0)
    }

    static func start(
        since: Date?, until: Date, environment: Settings.Environment, dryRun: Bool, on connection: Connection
    ) throws -> Int64 {
        try connection.query(
            SQL.start,
            ["since": since, "until": until, "environment": environment.rawValue, "dry_run": dryRun,
             "host": ProcessInfo.processInfo.hostName, "pid": Int(ProcessInfo.processInfo.processIdentifier)]
        )[0].decode(Int64.self, at: 0)
    }

    /// What the run verified, with the runs since the last finished one.
    static func verificationSummary(_ run: RunContext) throws -> RunReport.Verification {
        let rows = try run.connection.query(SQL.verificationSummary, ["resumes_after": run.resumesAfter])
        var summary = RunReport.Verification()
        for row in rows {
            let state = try row.decode(VerificationState.self, at: 0)
            let status = try row.decode(String.self, at: 1)
            let count = try row.decode(Int.self, at: 2)
            summary.uploads += count
            switch state {
            case .verified: summary.verified += count
            case .invalid: summary.invalid += count
            default: summary.retry += count
            }
            if !status.isEmpty { summary.byAppleStatus[status, default: 0] += count }
        }
        return summary
    }

    /// Records the snapshot the run starts judging from — every ledger, token and account change
    /// it shows as committed is visible to the Server API's lookups and the diff that follow — and
    /// returns it. Taken before the Server API stage, so that a ledger change is asked of Apple
    /// (Get Transaction Info) by the run that first judges it, or by the next one when it committed
    /// after this snapshot (SPEC section 5: a ledger change is judged with every source the run
    /// has). A run that does not finish leaves its changes to the next run, which starts from the
    /// same finished run's snapshot.
    static func markLedgerChanges(_ run: RunContext) throws {
        try run.connection.execute(SQL.markLedgerChanges, ["run_id": run.id])
    }

    /// The snapshot of the last finished run (`'1:1:'`, nothing committed, when there is none): the
    /// run judges the changes that one did not show (`sql/diff/scope/ledger_changes.sql`).
    static func ledgerChangesAfter(_ run: RunContext) throws -> String {
        try run.connection.query(SQL.ledgerChangesAfter, ["resumes_after": run.resumesAfter])[0]
            .decode(String.self, at: 0)
    }

    /// Records the digest of what the run's findings depend on beyond their own rows
    /// (`Differ.judgedInputs`) and says whether the last finished run's was the same: only then
    /// may the run carry over unchanged open items (`Differ.Parameters.carriesUnchangedItems`).
    /// A nil digest (the ledger's changes are not noted) is never the same.
    static func markJudgedInputs(_ run: RunContext, _ digest: String?) throws -> Bool {
        try run.connection.queryFirst(
            SQL.markJudgedInputs, ["run_id": run.id, "digest": digest, "resumes_after": run.resumesAfter]) != nil
    }

    /// Records the run as finished; a finished run that wrote the queue prunes the ledger's and
    /// the tokens' changes its diff's snapshot showed as committed (`sql/runs/finish.sql`).
    static func finish(_ report: RunReport, on connection: Connection) throws {
        try connection.execute(
            SQL.finish,
            ["run_id": report.runID, "status": report.status, "finished_at": report.finishedAt,
             "uploads_total": report.verification.uploads, "uploads_verified": report.verification.verified,
             "uploads_invalid": report.verification.invalid, "uploads_retry": report.verification.retry,
             "findings_total": report.openFindings, "findings_new": report.newFindings,
             "counts": try PostgresJSON(encoding: report.counts), "timings": try PostgresJSON(encoding: report.timings),
             "trends": try PostgresJSON(encoding: report.trendFacts),
             "report_dir": report.reportDirectory])
    }

    /// Whether a run was recorded as finished (`completed` or `completed_with_unresolved`).
    static func isFinished(runID: Int64, on connection: Connection) throws -> Bool {
        try connection.queryFirst(SQL.finished, ["run_id": runID]) != nil
    }

    static func fail(runID: Int64, status: RunStatus, error: String, on connection: Connection) throws {
        try connection.execute(SQL.fail, ["run_id": runID, "status": status, "error": error])
    }

    /// The statements, in `sql/runs/`.
    enum SQL {
        static let running: SQLFile = "runs/running.sql"
        static let abandonStale: SQLFile = "runs/abandon_stale.sql"
        static let lastFinished: SQLFile = "runs/last_finished.sql"
        static let watermark: SQLFile = "runs/watermark.sql"
        static let start: SQLFile = "runs/start.sql"
        static let verificationSummary: SQLFile = "runs/verification_summary.sql"
        static let markLedgerChanges: SQLFile = "runs/mark_ledger_changes.sql"
        static let ledgerChangesAfter: SQLFile = "runs/ledger_changes_after.sql"
        static let markJudgedInputs: SQLFile = "runs/mark_judged_inputs.sql"
        static let finish: SQLFile = "runs/finish.sql"
        static let finished: SQLFile = "runs/finished.sql"
        static let fail: SQLFile = "runs/fail.sql"
    }
}
