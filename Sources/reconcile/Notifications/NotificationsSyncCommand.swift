import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile notifications sync [--since T]`: Get Notification History since the last sync.
struct NotificationsSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Fetch Notification History and Play's voided purchases since the last sync; answer refund requests.",
        discussion: """
            Stores every notification Apple sent since the last sync (or --since) in \
            reconcile.notification_history, verified like the app's own, each notificationUUID taken into \
            account once whatever brought it; the next run applies their transactions. With \
            RECONCILE_CONSUMPTION_ANSWERS=on it then answers CONSUMPTION_REQUESTs of consenting accounts \
            (Apple allows 12 hours). Cheap enough for an hourly cron. Needs the App Store Server API \
            credentials (APPSTORE_KEY_ID, APPSTORE_ISSUER_ID, APPSTORE_PRIVATE_KEY_FILE).

            With Google Play on and a service account (GOOGLE_PLAY_PACKAGE_NAMES, \
            GOOGLE_PLAY_SERVICE_ACCOUNT_FILE) it also reads each package's voided-purchases list since \
            the last read, as a run does: each void kept once and applied to its order, a voided order \
            no upload holds stored from the Developer API, and a gap of more than 30 days since the last \
            read repaired by asking the API about the purchases bought in it. It takes no run lock (a \
            run may go on meanwhile); the list has a lock of its own. --since applies to Apple only.

            Exit codes: 0 synced; 1 Apple or Google could not answer (the next sync asks again) or \
            failed; 3 another sync holds a lock; 64 bad usage or configuration (Google refusing the \
            service account included).
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Start of the span (date, RFC 3339 timestamp, or duration back from now); default: the last sync.")
    var since: String?

    @OptionGroup var config: ConfigFileOptions

    func validate() throws {
        try TimeExpression.validateSpan(since: since, until: nil)
    }

    func run() async throws {
        let start = since.flatMap { TimeExpression.instant($0, now: Date()) }
        try await common.run { logger in
            let settings = try await config.settings()
            let play = settings.googlePlay.apiEnabled
            guard settings.serverAPIKey != nil || play else {
                throw ConfigurationError(
                    "notifications sync needs the App Store Server API: set APPSTORE_KEY_ID, APPSTORE_ISSUER_ID "
                        + "and APPSTORE_PRIVATE_KEY_FILE (or, for Google Play, GOOGLE_PLAY_PACKAGE_NAMES and "
                        + "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE)")
            }
            let connection = try settings.connect()
            try Schema.requireUpToDate(connection)
            var locked = false
            var unanswered = false
            if settings.serverAPIKey != nil {
                let summary = try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: logger) {
                    verifier, api in
                    try await api?.notificationSync(NotificationApplier(verify: verifier.verifyNotification))
                        .sync(since: start, on: connection)
                }
                if let summary {
                    print(Self.text(summary, settings: settings))
                    unanswered = unanswered || summary.unanswered != nil
                } else {
                    FileHandle.standardError.write(Data("reconcile: another notifications sync holds the lock\n".utf8))
                    locked = true
                }
            }
            if play, let report = try await PlayVoidedSync.sync(settings: settings, logger: logger, on: connection) {
                if report.locked {
                    FileHandle.standardError.write(
                        Data("reconcile: another sync or a run is reading Google Play's voided purchases\n".utf8))
                    locked = true
                } else {
                    print(Self.text(report))
                    unanswered = unanswered || report.packages.contains { $0.unanswered != nil }
                }
            }
            if locked { throw ExitStatus.locked }
            if unanswered { throw ExitStatus.failed }
        }
    }

    static func text(_ report: PlayVoidedSync.Report) -> String {
        var lines: [String] = []
        for package in report.packages {
            lines.append(
                "google play voided purchases (\(package.packageName)): "
                    + "\(package.voidsRead) read in \(package.pages) pages, "
                    + "\(package.voidsRecorded) new (\(package.voidedUnacknowledged) for want of an acknowledgement), "
                    + "\(package.ordersStored) voided orders no upload held stored from the API")
            if package.gap {
                lines.append(
                    "  the last read was more than 30 days ago: \(package.gapPurchasesAsked) purchases bought in the gap "
                        + "asked of the API again")
            }
            if let reason = package.unanswered {
                lines.append("  Google did not answer: \(reason); the next sync reads the same span again")
            }
        }
        lines.append("the voids are applied to their orders; the next run judges them")
        return lines.joined(separator: "\n")
    }

    static func text(_ summary: NotificationHistorySync.Summary, settings: Settings) -> String {
        var lines = [
            "notification history: \(summary.fetched) fetched in \(summary.pages) pages, \(summary.stored) new "
                + "(\(summary.undelivered) the app's endpoint missed, \(summary.invalid) invalid)"
        ]
        if let reason = summary.unanswered {
            lines.append("  Apple did not answer: \(reason); the next sync asks for the same span again")
        }
        let c = summary.consumption
        if settings.consumption.enabled {
            lines.append(
                "refund requests: \(c.answered) answered, \(c.expired) expired, \(c.failed) refused by Apple, "
                    + "\(c.waiting) waiting (no consent, unknown buyer, or Apple unreachable)")
        } else {
            lines.append("refund requests: not answered (RECONCILE_CONSUMPTION_ANSWERS is off)")
        }
        lines.append("the next run applies the new notifications' transactions")
        return lines.joined(separator: "\n")
    }
}
