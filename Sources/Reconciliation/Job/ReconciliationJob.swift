import Foundation
import Logging
import Postgres

/// `reconcile run`: the nightly job (SPEC sections 2, 3, 5, 6, 10).
///
/// lock → record the run → enqueue the window → verify (claimed in batches) → diff inside
/// PostgreSQL → upsert the review queue → write the report → record the outcome.
public struct ReconciliationJob: Sendable {
    /// What the operator asked for.
    public struct Options: Sendable {
        /// `--since`; nil continues from the last successful run's watermark.
        public var since: Date?
        /// `--until`; nil is now.
        public var until: Date?
        /// `--dry-run`: verify and diff, write no review items.
        public var dryRun = false
        /// `--report-dir`, overriding `RECONCILE_REPORT_DIR`.
        public var reportDirectory: String?

        /// Creates options.
        public init(since: Date? = nil, until: Date? = nil, dryRun: Bool = false, reportDirectory: String? = nil) {
            self.since = since
            self.until = until
            self.dryRun = dryRun
            self.reportDirectory = reportDirectory
        }
    }

    /// How late an upload may arrive for the window before it: the next nightly window starts
    /// this much before the last one ended.
    public static let overlap: TimeInterval = 3600

    let settings: Settings
    let verifier: any UploadVerifier
    let notifications: NotificationApplier?
    let serverAPI: ServerAPILookups?
    /// Google Play's services; nil while Play is off.
    let play: PlayServices?
    let logger: Logger
    let worker: String
    let batchSize: Int

    /// Creates the job.
    public init(
        settings: Settings, verifier: any UploadVerifier, notifications: NotificationApplier? = nil,
        serverAPI: ServerAPILookups? = nil, play: PlayServices? = nil, logger: Logger, batchSize: Int = 64
    ) {
        self.settings = settings
        self.verifier = verifier
        self.notifications = notifications
        self.serverAPI = serverAPI
        self.play = play
        self.logger = logger
        self.batchSize = batchSize
        worker = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"
    }

    /// Runs the job to the end and returns its report. Throws `RunLockedError` when another run
    /// holds the lock, `RunConfigurationError` for configuration Apple refused.
    ///
    /// With answers to refund requests on, they are sent beside the run once its sync stage has
    /// stored what Notification History had, on a connection of their own, and waited for after
    /// the run lock is released (``withAnswersBeside(_:_:)``): Apple's latency is never paid
    /// inside the lock.
    public func run(_ options: Options, progress: (@Sendable (RunProgress) -> Void)? = nil) async throws -> RunReport {
        guard let answerer = consumptionAnswerer else {
            return try await runLocked(options, progress: progress, historySynced: {})
        }
        return try await withAnswersBeside(answerer) { historySynced in
            try await runLocked(options, progress: progress, historySynced: historySynced)
        }
    }

    private func runLocked(
        _ options: Options, progress: (@Sendable (RunProgress) -> Void)?, historySynced: @Sendable () -> Void
    ) async throws -> RunReport {
        // A policy file that does not load stops the run before it starts (PolicyFileError, exit 64):
        // a run never goes on without the policies it was given.
        let policies = try settings.policyFile.map { try PolicyFile.load(path: $0) }
        let connection = try settings.connect()
        try Schema.requireUpToDate(connection)
        if !options.dryRun { try settings.approvalAbove.recordAtStart("run", on: connection) }
        guard try await Self.takeRunLock(connection) else {
            throw RunLockedError(holder: try RunLedger.runningRun(on: connection))
        }
        defer { _ = try? connection.advisoryUnlock(Schema.LockKey.run) }
        try RunLedger.abandonStale(on: connection)
        let writer = ReportWriter(root: options.reportDirectory ?? settings.reportDirectory, reader: settings.reportReader)
        try writer.tidy { try RunLedger.isFinished(runID: $0, on: connection) }
        // The work of runs since the last finished one that did not finish (killed, failed,
        // interrupted, dry) is this run's to judge and report, as if it had done it itself.
        let resumesAfter = try RunLedger.lastFinishedRun(on: connection)

        let startedAt = Date()
        let until = options.until ?? startedAt
        // A purchase or delivery younger than the grace period at the last run was left for this
        // one, so the window reaches back by the grace period too when it is the longer.
        let since = try options.since
            ?? RunLedger.watermark(on: connection).map { $0.addingTimeInterval(-max(Self.overlap, settings.grace)) }
        let runID = try RunLedger.start(
            since: since, until: until, environment: settings.environment, dryRun: options.dryRun, on: connection)
        var log = logger
        log[metadataKey: "run.id"] = "\(runID)"
        let run = RunContext(
            id: runID, since: since, until: until, startedAt: startedAt,
            judgeBefore: startedAt.addingTimeInterval(-settings.grace), resumesAfter: resumesAfter,
            dryRun: options.dryRun, connection: connection, logger: log)
        log.info("run started", metadata: [
            "window.since": "\(since.map(TimeExpression.format) ?? "beginning")", "window.until": "\(TimeExpression.format(until))",
        ])
        do {
            return try await stages(
                of: run, policies: policies, writer: writer, progress: progress, historySynced: historySynced)
        } catch {
            let interrupted = error is CancellationError
            let reason = interrupted
                ? "interrupted by a signal: work in flight was rolled back; the next run resumes it" : "\(error)"
            let status: RunStatus = interrupted ? .interrupted : .failed
            if (try? RunLedger.fail(runID: runID, status: status, error: reason, on: connection)) == nil,
                let fresh = try? settings.connect()
            {
                // The run's own session is gone (the server restarted): say why on a new one; if
                // the server is not back yet, the next run records the run as abandoned.
                try? RunLedger.fail(runID: runID, status: status, error: reason, on: fresh)
            }
            log.error("run \(status)", metadata: ["error": "\(reason)"])
            throw error
        }
    }

    /// notification sync → Play's voids → verify → notifications → Server API → Play's orders and
    /// acknowledgements → diff and queue → policies → report, each timed by one runner.
    private func stages(
        of run: RunContext, policies: PolicyFile?, writer: ReportWriter, progress: (@Sendable (RunProgress) -> Void)?,
        historySynced: @Sendable () -> Void
    ) async throws -> RunReport {
        let connection = run.connection
        var stages = StageRunner(logger: run.logger)
        // The ledger's, tokens' and accounts' changes this run judges are those the last finished
        // run's snapshot did not show; this run's is taken before any lookup of Apple's.
        try RunLedger.markLedgerChanges(run)
        // Notifications the app's endpoint missed (SPEC section 14); the refund requests among them
        // are answered beside the stages from here on.
        if let serverAPI, let notifications {
            _ = try await stages.run("notification_sync") {
                try await serverAPI.notificationSync(notifications).sync(run)
            }
        }
        historySynced()
        let playStage = play.map { PlayRunStage(services: $0, settings: settings) }
        var playSummary = PlayRunSummary()
        if let playStage {
            try await stages.run("play_voids") { try await playStage.beforeVerify(run, &playSummary) }
        }
        try await stages.run("verify") {
            let queue = VerificationQueue(uploads: settings.relations.uploads, maxAttempts: settings.maxAttempts)
            let total = try queue.enqueue(runID: run.id, since: run.since, until: run.until, on: connection)
            try await verifyAll(queue: queue, runID: run.id, total: total, connection: connection, logger: run.logger,
                                progress: progress)
        }
        if let notifications {
            let applied = try await stages.run("notifications") {
                try await notifications.applyPending(runID: run.id, on: connection)
            }
            run.logger.info("notifications applied", metadata: ["notifications.applied": "\(applied)"])
        }
        var unanswered = 0
        if let serverAPI {
            let summary = try await stages.run("server_api") { try await serverAPI.run(run) }
            unanswered = summary.unanswered
            run.logger.info("server api lookups", metadata: [
                "histories": "\(summary.histories)", "transactions": "\(summary.transactions)",
                "lookups": "\(summary.lookups)", "unanswered": "\(summary.unanswered)",
            ])
        }
        if let playStage {
            try await stages.run("play_api") { try await playStage.afterVerify(run, &playSummary) }
        }
        let (summary, changes) = try await stages.run("diff_and_queue") {
            let differ = Differ(relations: settings.relations)
            return try connection.transaction {
                let ledgerChangesAfter = try RunLedger.ledgerChangesAfter(run)
                var parameters = Differ.Parameters(run: run, settings: settings, ledgerChangesAfter: ledgerChangesAfter)
                // Open items none of whose inputs changed since the last finished run are carried
                // over unjudged, unless what every finding depends on changed (a dry run judges all).
                let digest = try differ.judgedInputs(settings: settings.findingsKey, on: connection)
                let sameInputs = try RunLedger.markJudgedInputs(run, digest)
                parameters.carriesUnchangedItems = sameInputs && !run.dryRun
                // What every finding depends on changed (the catalogue, a setting that decides
                // findings, the rules themselves after an upgrade): a transaction with no item can
                // be a finding now, so the run judges the whole history, once, as a run without a
                // watermark would (SPEC section 5: a chain of nightly runs equals one run over the
                // whole history). Without the ledger's triggers there is no digest to compare, and
                // the window is judged as before (docs/operations.md).
                if digest != nil, !sameInputs, case .window(_, let until) = parameters.scope {
                    run.logger.notice("the catalogue, the settings or the rules changed: judging the whole history")
                    parameters.scope = .wholeHistory(until: until)
                }
                try differ.computeFindings(parameters, on: connection)
                Failpoint.pass("diff.computed")
                let changes = run.dryRun ? Differ.QueueChanges() : try differ.upsertQueue(runID: run.id, on: connection)
                return (try ReportBuilder.collect(run), changes)
            }
        }

        // The policies decide what they take of the queue, this run's new items included; a dry run
        // writes no items and decides none.
        if let policies, !run.dryRun {
            _ = try await stages.run("policies") {
                try PolicyEngine(
                    file: policies, approval: settings.approvalAbove, judgement: try DecisionJudgement.rules(settings),
                    logger: run.logger)
                    .apply(runID: run.id, on: connection)
            }
        }

        let verification = try RunLedger.verificationSummary(run)
        // An Orders API lookup Google did not answer leaves its delivery unjudged, as Apple's do.
        unanswered += playSummary.ordersUnanswered
        let status: RunStatus = verification.retry > 0 || unanswered > 0 ? .completedWithUnresolved : .completed
        var report = RunReport(
            runID: run.id, status: status, startedAt: run.startedAt, finishedAt: Date(), since: run.since,
            until: run.until, environment: settings.environment, dryRun: run.dryRun,
            verification: verification, summary: summary, changes: changes, timings: stages.timings)
        (report.notifications, report.consumption) = try RefundActivity.since(run)
        report.policies = try PolicyTally.forRun(run.id, file: policies, on: connection)
        report.play = playStage.map { _ in playSummary }
        // The trends up to this run, its own night from the report (it is not finished yet): a
        // failure to read them leaves report.html without them, never the run without a report.
        do {
            report.trends = try Trends.read(until: run.until, beforeRun: run.id, refundRate: false, on: connection)
                .including(report, newByKind: try Trends.openedBy(run: run.id, on: connection))
        } catch {
            run.logger.warning("trends not read", metadata: ["error": "\(error)"])
        }
        // The findings stream from the session's table into the files: none is held in memory.
        let written = try await stages.run("report") {
            // Rows rendered by an earlier run for an item this one carries over are written as they
            // are; those rendered now are kept for the next (a dry run keeps none).
            let cache = ReportRowCache(reader: writer.reader)
            let written = try writer.writeAside(
                report, findings: { each in try ReportBuilder.streamFindings(on: connection, layout: cache.layout, each) },
                rendered: run.dryRun ? nil : cache.note)
            Failpoint.pass("report.written")
            if !run.dryRun { try cache.store(on: connection) }
            try ReportBuilder.discard(on: connection)
            return written
        }
        report.timings = stages.timings
        report.reportDirectory = written.directory
        // Finished first, then published: the folder appears only for a finished run (a kill
        // in between leaves it aside, and the next run publishes it).
        try RunLedger.finish(report, on: connection)
        Failpoint.pass("report.finished")
        try writer.publish(written)
        // The alert check (SPEC section 19) never fails the run: a check that fails is logged,
        // and the next run's check compares with the last one that was kept.
        if settings.alerts.enabled, !run.dryRun {
            do {
                // Every message names the top flagged segment, whatever the rules: read when the
                // flagged_segment rule watches them or a message goes out.
                try RunAlerts.check(report, rules: policies?.alerts ?? .defaults, settings: settings, on: connection) {
                    try RunAlerts.flagged(until: run.until, settings: settings, on: connection)
                }
            } catch {
                run.logger.warning("alert check failed", metadata: ["error": "\(error)"])
            }
        }
        run.logger.info("run finished", metadata: [
            "run.status": "\(status)", "findings.total": "\(summary.open)", "findings.new": "\(report.newFindings)",
        ])
        return report
    }

    /// `reconcile run --worker`: helps the run in progress verify its uploads, then returns how
    /// many this worker verified (0 when no run is in progress).
    public func work(progress: (@Sendable (RunProgress) -> Void)? = nil) async throws -> Int {
        let connection = try settings.connect()
        try Schema.requireUpToDate(connection)
        guard let run = try RunLedger.runningRun(on: connection) else { return 0 }
        var log = logger
        log[metadataKey: "run.id"] = "\(run.id)"
        log[metadataKey: "worker"] = "\(worker)"
        log.info("worker joined the run")
        let queue = VerificationQueue(uploads: settings.relations.uploads, maxAttempts: settings.maxAttempts)
        var done = 0
        let started = Date()
        // A worker stops on an outage like the run does (verifyDue throws): it would otherwise
        // spend every attempt and its timeout on each upload it claims.
        try await verifyDue(queue: queue, runID: run.id, waitForOtherWorkers: false, connection: connection,
                            logger: log) { results in
            done += results.count
            progress?(RunProgress(verified: done, total: done, elapsed: Date().timeIntervalSince(started)))
        }
        log.info("worker finished", metadata: ["uploads.verified": "\(done)"])
        return done
    }

    /// Verifies the run's uploads until none is due, and stops it when Apple answers none of them.
    func verifyAll(
        queue: VerificationQueue, runID: Int64, total: Int, connection: Connection, logger: Logger,
        progress: (@Sendable (RunProgress) -> Void)?
    ) async throws {
        var done = 0
        let started = Date()
        do {
            try await verifyDue(queue: queue, runID: runID, waitForOtherWorkers: true, connection: connection,
                                logger: logger) { results in
                done += results.count
                progress?(RunProgress(verified: done, total: total, elapsed: Date().timeIntervalSince(started)))
            }
        } catch let outage as AppleUnreachableError {
            throw AppleUnreachableError(
                unanswered: outage.unanswered, lastReason: outage.lastReason, left: max(0, total - done))
        }
    }
}

/// Tells an Apple that is down from uploads that fail one by one: uploads verifyReceipt did not
/// answer at all (timeouts, connection errors, HTTP errors, garbage), in a row. Every upload of
/// an outage would cost RECONCILE_MAX_ATTEMPTS requests and their timeouts, hours over a large
/// window; past the threshold the run stops verifying and leaves the rest for the next run.
struct AppleOutage {
    let threshold: Int
    private(set) var unanswered = 0
    private(set) var lastReason = ""

    init(threshold: Int) { self.threshold = threshold }

    var isOngoing: Bool { unanswered >= threshold }

    mutating func observe(_ verdict: Verdict) {
        switch verdict {
        case .retry(let reason, nil):
            unanswered += 1
            lastReason = reason
        case .retry(_, .some), .invalid(_, _, .some):
            unanswered = 0
        case .verified(let upload) where upload.appleStatus != nil:
            unanswered = 0
        case .verified, .invalid:
            // Verified locally (JWS, offline receipts) or refused before asking: says nothing.
            break
        }
    }
}

/// verifyReceipt answered none of many uploads in a row: the run stops verifying and fails
/// (exit 1); what it did not verify waits for the next run.
public struct AppleUnreachableError: Error, CustomStringConvertible {
    /// Uploads in a row Apple did not answer.
    public let unanswered: Int
    /// The last failure, as the client saw it.
    public let lastReason: String
    /// Uploads the run did not get to.
    public let left: Int

    public var description: String {
        "Apple's verifyReceipt did not answer \(unanswered) uploads in a row (last: \(lastReason)); "
            + "the run stopped verifying and left them and \(left) more for the next run"
    }
}

/// Progress of the verification phase, for the TTY progress line.
public struct RunProgress: Sendable {
    /// Uploads verified so far.
    public var verified: Int
    /// Uploads the run has to verify.
    public var total: Int
    /// Seconds since verification started.
    public var elapsed: TimeInterval
}

extension ReconciliationJob {
    /// How long a run waits for the run lock while no run is recorded as running.
    static let receiverJudgementWait: Duration = .seconds(30)

    /// Takes the run lock. Held while no run is recorded as running, its holder is the
    /// notification receiver judging what its notifications brought (one judgement of at most
    /// `ReceiverWorker.Timing.judgementsPerPass` transactions; its policies decide outside the
    /// lock): the run waits for it (up to ``receiverJudgementWait``) rather than exit 3, and holds
    /// `LockKey.runWanted` while it waits, so that no later pass takes the lock before it. Held by
    /// a recorded run, the answer is at once: false.
    static func takeRunLock(_ connection: Connection) async throws -> Bool {
        if try connection.tryAdvisoryLock(Schema.LockKey.run) { return true }
        // Another run waiting holds it already: the receiver yields to both all the same.
        let wanted = try connection.tryAdvisoryLock(Schema.LockKey.runWanted)
        defer { if wanted { _ = try? connection.advisoryUnlock(Schema.LockKey.runWanted) } }
        let end = ContinuousClock.now + receiverJudgementWait
        while true {
            if try connection.tryAdvisoryLock(Schema.LockKey.run) { return true }
            guard ContinuousClock.now < end, try RunLedger.runningRun(on: connection) == nil else { return false }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// Another run holds the run lock (exit 3).
public struct RunLockedError: Error, CustomStringConvertible {
    /// The run that holds it, as recorded in `reconcile.runs`, if found.
    public let holder: RunLedger.RunningRun?

    public var description: String {
        guard let holder else { return "another reconcile run holds the lock on this database" }
        return "run \(holder.id) holds the lock (started \(TimeExpression.format(holder.startedAt))"
            + (holder.host.map { " on \($0)" } ?? "") + (holder.pid.map { ", pid \($0)" } ?? "") + ")"
    }
}

extension Settings {
    /// The settings that decide which findings a diff makes (the relations are added by
    /// `Differ.judgedInputs`), as text for the run's judged-inputs digest.
    var findingsKey: String {
        ([
            "bundle_ids=\(bundleIDs.sorted().joined(separator: ","))", "environment=\(environment.rawValue)",
            "grace=\(grace)", "server_api=\(serverAPIKey != nil)",
        ]
        // Google Play's, only while it is on (a deployment without Play keeps its digest): which
        // packages are judged, and whether Play's unverified deliveries wait for the Orders API.
        + (googlePlay.enabled
            ? ["package_names=\(googlePlay.packageNames.sorted().joined(separator: ","))",
               "play_api=\(googlePlay.serviceAccountFile != nil)"]
            : [])
        ).joined(separator: "\n")
    }
}
