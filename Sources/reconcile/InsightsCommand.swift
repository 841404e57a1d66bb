import ArgumentParser
import Foundation
import Reconciliation

extension InsightDimension: ExpressibleByArgument {}

/// `reconcile insights`: why orders leak (SPEC section 19).
struct InsightsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insights",
        abstract: "Where orders leak: the judged purchases by build, OS, device, product, store, upload delay, hour.",
        discussion: """
            Judged purchases are the store transactions the nightly run judges (accepted app, paid, older than \
            RECONCILE_GRACE at the last finished run) purchased in [--since, --until); their findings are the review \
            queue's items of those purchases that are open, in review, awaiting approval or resolved (dismissed and \
            auto-resolved items do not count). The leak rate is purchases with a missed_delivery or wrong_account \
            finding per purchase; a segment is FLAGGED when its rate's 95 % Wilson lower bound is above three \
            times the span's overall rate and it has at least 5 leaks.

            Dimensions: \(InsightDimension.allCases.map(\.rawValue).joined(separator: ", ")). The device's \
            app_version, os_version and model come from the device JSON of the upload that first carried the \
            purchase (also read as app, os, device_model, system_version); absent: unknown. upload_delay's values \
            are under_1_minute, under_1_hour, under_1_day, later, never_uploaded; purchase_hour's 00 to 23 (UTC).

            --json with --by prints one object {"span", "overall", "by", "segments"}; without --by, an array of \
            such objects, one per dimension. T is a date (2026-11-01, UTC midnight), an RFC 3339 timestamp \
            (2026-11-01T02:00:00Z, …+08:00) or a duration back from now (36h, 90d).

            Exit codes: 0 done; 1 failed; 64 bad usage or configuration.
            """
    )

    @Option(help: "Purchases from (date, RFC 3339 timestamp, or duration back from now; default: the whole history).")
    var since: String?

    @Option(help: "Purchases before (default: now).")
    var until: String?

    @Option(help: "One dimension (default: every one).")
    var by: InsightDimension?

    @Option(help: "Only this store's purchases (default: every store's).")
    var store: Store?

    @Flag(help: "Print JSON: one object with --by, else an array of one object per dimension.")
    var json = false

    @OptionGroup var config: ConfigFileOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try TimeExpression.validateSpan(since: since, until: until)
    }

    func run() async throws {
        try await common.run { _ in
            let now = Date()
            let query = InsightsQuery(
                since: since.flatMap { TimeExpression.instant($0, now: now) },
                until: until.flatMap { TimeExpression.instant($0, now: now) } ?? now, store: store,
                dimensions: by.map { [$0] } ?? InsightDimension.allCases)
            let settings = try await config.settings()
            let insights = try Insights.compute(query, settings: settings, on: try settings.connect())
            print(json ? insights.json(single: by != nil) : insights.terminalText)
        }
    }
}
