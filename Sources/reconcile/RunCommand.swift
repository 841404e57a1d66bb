import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciliation

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The nightly job: verify the window's uploads with Apple, diff against the ledger, fill the review queue.",
        discussion: """
            Without --since, continues from the last successful run's watermark (minus an hour for late \
            uploads); the first run reconciles the whole history. With RECONCILE_POLICY_FILE the policies \
            decide the open items they take before the report is written (reconcile policy --help). \
            T is a date (2026-11-01, UTC midnight), \
            an RFC 3339 timestamp (2026-11-01T02:00:00Z, …+08:00) or a duration back from now (36h, 7d).

            Exit codes: 0 completed; 1 failed; 2 completed with new findings (only with --fail-on-findings); \
            3 another run holds the lock; 64 bad usage or configuration.
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Start of the window (date, RFC 3339 timestamp, or duration back from now).")
    var since: String?

    @Option(help: "End of the window (default: now).")
    var until: String?

    @Flag(help: "Verify and diff, but write no review items.")
    var dryRun = false

    @Option(help: "Where run-<id>/ report folders go (default: RECONCILE_REPORT_DIR or ./reports).")
    var reportDir: String?

    @Flag(help: "Exit 2 when the run found new findings.")
    var failOnFindings = false

    @Flag(help: "Help the run in progress verify its uploads (several processes or machines), then exit.")
    var worker = false

    @OptionGroup var config: ConfigFileOptions

    @Option(help: "Write Prometheus text-format metrics here at the end of the run (node-exporter textfile collector).")
    var metricsFile: String?

    func validate() throws {
        try TimeExpression.validateSpan(since: since, until: until)
    }

    func run() async throws {
        let logger = common.makeLogger()
        let now = Date()
        let options = ReconciliationJob.Options(
            since: since.flatMap { TimeExpression.instant($0, now: now) },
            until: until.flatMap { TimeExpression.instant($0, now: now) },
            dryRun: dryRun, reportDirectory: reportDir)
        do {
            let settings = try await config.settings()
            if worker {
                let verified = try await Stores.withVerifier(settings: settings, logger: logger) { verifier in
                    try await ShutdownSignals.cancellingOnSignal(logger: logger) {
                        try await ReconciliationJob(settings: settings, verifier: verifier, logger: logger).work()
                    }
                }
                print(verified == 0 ? "no reconciliation run needs help" : "verified \(verified) uploads")
                return
            }
            let report = try await Stores.withJob(settings: settings, logger: logger) { job in
                try await ShutdownSignals.cancellingOnSignal(logger: logger) {
                    try await job.run(options, progress: ProgressLine.standardError())
                }
            }
            ProgressLine.clear()
            if let metricsFile { try MetricsFile.write(report, to: metricsFile) }
            print(report.terminalSummary)
            // The decisions waiting for the app go out with every run; a webhook that fails or a
            // signal during the delivery only leaves rows for the next delivery: the run is done
            // and its exit status is the run's.
            do {
                let delivery = try await ShutdownSignals.cancellingOnSignal(logger: logger) {
                    try await ActionOutbox.deliverIfConfigured(settings: settings, logger: logger)
                }
                if let delivery, delivery.failed + delivery.left > 0 {
                    logger.warning("outbox rows not delivered", metadata: [
                        "outbox.failed": "\(delivery.failed)", "outbox.left": "\(delivery.left)",
                    ])
                }
            } catch {
                logger.warning("outbox delivery stopped", metadata: ["error": "\(error)"])
            }
            // The run's alert, and any an earlier run could not send, go out the same way: a chat
            // that is down leaves them queued for the next run.
            do {
                _ = try await ShutdownSignals.cancellingOnSignal(logger: logger) {
                    try await AlertDelivery.deliverIfConfigured(settings: settings, logger: logger)
                }
            } catch {
                logger.warning("alert delivery stopped", metadata: ["error": "\(error)"])
            }
            if failOnFindings, report.newFindings > 0 { throw ExitStatus.findings }
        } catch let error as RunLockedError {
            throw report(error, logger: logger)
        } catch let error as ExitCode {
            throw error
        } catch is CancellationError {
            ProgressLine.clear()
            FileHandle.standardError.write(Data(
                "reconcile: interrupted; the run is recorded as interrupted and the next run resumes its work\n".utf8))
            throw ExitStatus.failed
        } catch let error as PostgresError where error.isConnectionFailure {
            // libpq's text spans several lines and the statement is no use to whoever reads this.
            ProgressLine.clear()
            let reason = error.message.split(separator: "\n").first.map(String.init) ?? error.message
            let what = error.sql == nil ? "cannot reach the database" : "lost the database connection"
            FileHandle.standardError.write(Data(
                ("reconcile: \(what) (\(reason)); the run did not finish. "
                    + "Run it again once PostgreSQL answers: it resumes the work.\n").utf8))
            logger.error("database connection failed", metadata: ["error": "\(error)"])
            throw ExitStatus.failed
        } catch let error as RunConfigurationError {
            throw report(error, logger: logger)
        } catch {
            ProgressLine.clear()
            throw report(error, logger: logger)
        }
    }
}
