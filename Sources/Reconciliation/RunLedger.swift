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
        try connection.queryFirst(
            "SELECT id, started_at, host, pid FROM reconcile.runs WHERE status = 'running' ORDER BY id DESC LIMIT 1"
        ).map {
            RunningRun(
                id: try $0.decode(Int64.self, "id"), startedAt: try $0.decode(Date.self, "started_at"),
                host: try $0.decode(String?.self, "host"), pid: try $0.decode(Int?.self, "pid"))
        }
    }

    /// Runs still marked running while we hold the lock died without saying so (kill -9, power loss).
    static func abandonStale(on connection: Connection) throws {
        try connection.execute(
            """
            UPDATE reconcile.runs SET status = 'failed', finished_at = now(),
                   error = 'the process ended without finishing the run (killed, or the machine stopped)'
             WHERE status = 'running'
            """)
    }

    /// The last run that finished its work and wrote the queue (0 when none). Every later run
    /// but the one starting ended without finishing (killed, failed, interrupted) or was a dry
    /// run: the next run takes over what they verified and found, to judge and report it.
    static func lastFinishedRun(on connection: Connection) throws -> Int64 {
        try connection.query(
            """
            SELECT coalesce(max(id), 0) FROM reconcile.runs
             WHERE status IN ('completed', 'completed_with_unresolved') AND NOT dry_run
            """)[0].decode(Int64.self, at: 0)
    }

    /// The end of the last successful run's window (dry runs do not count: they wrote no queue).
    static func watermark(on connection: Connection) throws -> Date? {
        try connection.query(
            """
            SELECT max(window_until) FROM reconcile.runs
             WHERE status IN ('completed', 'completed_with_unresolved') AND NOT dry_run
            """)[0].decode(Date?.self, at: 0)
    }

    static func start(
        since: Date?, until: Date, environment: Settings.Environment, dryRun: Bool, on connection: Connection
    ) throws -> Int64 {
        try connection.query(
            """
            INSERT INTO reconcile.runs (window_since, window_until, environment, dry_run, host, pid)
            VALUES ($1, $2, $3, $4, $5, $6) RETURNING id
            """,
            [since, until, environment.rawValue, dryRun, ProcessInfo.processInfo.hostName,
             Int(ProcessInfo.processInfo.processIdentifier)])[0].decode(Int64.self, at: 0)
    }

    /// What the run verified, with the runs since the last finished one.
    static func verificationSummary(_ run: RunContext) throws -> RunReport.Verification {
        let rows = try run.connection.query(
            """
            SELECT state, coalesce(apple_status::text, ''), count(*)::bigint
              FROM reconcile.upload_verifications WHERE last_run_id > $1
             GROUP BY 1, 2
            """, [run.resumesAfter])
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
        try run.connection.execute(
            "UPDATE reconcile.runs SET ledger_change_snapshot = pg_current_snapshot() WHERE id = $1", [run.id])
    }

    /// The snapshot of the last finished run (`'1:1:'`, nothing committed, when there is none): the
    /// run judges the changes that one did not show (`sql/diff/25_scope_ledger_changes.sql`).
    static func ledgerChangesAfter(_ run: RunContext) throws -> String {
        try run.connection.query(
            "SELECT coalesce((SELECT ledger_change_snapshot::text FROM reconcile.runs WHERE id = $1), '1:1:')",
            [run.resumesAfter]
        )[0].decode(String.self, at: 0)
    }

    /// Records the digest of what the run's findings depend on beyond their own rows
    /// (`Differ.judgedInputs`) and says whether the last finished run's was the same: only then
    /// may the run carry over unchanged open items (`Differ.Parameters.carriesUnchangedItems`).
    /// A nil digest (the ledger's changes are not noted) is never the same.
    static func markJudgedInputs(_ run: RunContext, _ digest: String?) throws -> Bool {
        try run.connection.execute("UPDATE reconcile.runs SET judged_inputs = $2 WHERE id = $1", [run.id, digest])
        return try run.connection.queryFirst(
            "SELECT 1 FROM reconcile.runs WHERE id = $1 AND judged_inputs = $2", run.resumesAfter, digest) != nil
    }

    /// Records the run as finished; a finished run that wrote the queue prunes, in the same
    /// statement, the ledger changes its diff's snapshot showed as committed (it saw them all).
    ///
    /// The prune reads the index on changed_xact between two bounds rather than the whole table:
    /// every change the snapshot shows is older than its xmax, and every change older than the
    /// previous finished run's xmin was committed before that run's snapshot, which pruned it.
    /// Without them a night read the whole table, or the index's dead entries, left by the last
    /// bulk prune (the full-size bench's 5M deliveries: 0.3-0.9 s of a nothing-new night).
    static func finish(_ report: RunReport, on connection: Connection) throws {
        let counts = try PostgresJSON(encoding: report.counts)
        let timings = try PostgresJSON(encoding: report.timings)
        try connection.execute(
            """
            WITH finished AS (
              UPDATE reconcile.runs
                 SET status = $2, finished_at = $3, uploads_total = $4, uploads_verified = $5, uploads_invalid = $6,
                     uploads_retry = $7, findings_total = $8, findings_new = $9, counts = $10, timings = $11,
                     report_dir = $12
               WHERE id = $1
             RETURNING ledger_change_snapshot, dry_run)
            DELETE FROM reconcile.ledger_changes
             WHERE changed_xact < (SELECT pg_snapshot_xmax(ledger_change_snapshot)::text::bigint FROM finished)
               AND changed_xact >= \(Self.previousPrunedBelow)
               AND pg_visible_in_snapshot(
                       changed_xact::text::xid8, (SELECT ledger_change_snapshot FROM finished WHERE NOT dry_run))
            """,
            [report.runID, report.status, report.finishedAt, report.verification.uploads, report.verification.verified,
             report.verification.invalid, report.verification.retry, report.openFindings, report.newFindings,
             counts, timings, report.reportDirectory])
        // The account tokens' changes alike (migration 0012).
        try connection.execute(
            """
            DELETE FROM reconcile.token_changes
             WHERE changed_xact < (SELECT pg_snapshot_xmax(ledger_change_snapshot)::text::bigint
                                     FROM reconcile.runs WHERE id = $1)
               AND changed_xact >= \(Self.previousPrunedBelow)
               AND pg_visible_in_snapshot(
                       changed_xact::text::xid8,
                       (SELECT ledger_change_snapshot FROM reconcile.runs WHERE id = $1 AND NOT dry_run))
            """, [report.runID])
    }

    /// The xmin of the snapshot of the last finished run before run `$1` (0 when none): every
    /// change noted below it was pruned by that run (see `finish`).
    private static let previousPrunedBelow = """
        coalesce((SELECT pg_snapshot_xmin(ledger_change_snapshot)::text::bigint FROM reconcile.runs
                   WHERE id < $1 AND status IN ('completed', 'completed_with_unresolved') AND NOT dry_run
                   ORDER BY id DESC LIMIT 1), 0)
        """

    /// Whether a run was recorded as finished (`completed` or `completed_with_unresolved`).
    static func isFinished(runID: Int64, on connection: Connection) throws -> Bool {
        try connection.queryFirst(
            "SELECT 1 FROM reconcile.runs WHERE id = $1 AND status IN ('completed', 'completed_with_unresolved')", runID
        ) != nil
    }

    static func fail(runID: Int64, status: RunStatus, error: String, on connection: Connection) throws {
        try connection.execute(
            "UPDATE reconcile.runs SET status = $2, finished_at = now(), error = $3 WHERE id = $1",
            [runID, status, error])
    }
}
