import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile notifications sync [--since T]`: Get Notification History since the last sync.
struct NotificationsSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Fetch Get Notification History since the last sync and answer refund requests.",
        discussion: """
            Stores every notification Apple sent since the last sync (or --since) in \
            reconcile.notification_history, verified like the app's own, each notificationUUID taken into \
            account once whatever brought it; the next run applies their transactions. With \
            RECONCILE_CONSUMPTION_ANSWERS=on it then answers CONSUMPTION_REQUESTs of consenting accounts \
            (Apple allows 12 hours). Cheap enough for an hourly cron. Needs the App Store Server API \
            credentials (APPSTORE_KEY_ID, APPSTORE_ISSUER_ID, APPSTORE_PRIVATE_KEY_FILE).

            Exit codes: 0 synced; 1 Apple could not answer (the next sync asks again) or failed; \
            3 another sync holds the lock; 64 bad usage or configuration.
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Start of the span (date, RFC 3339 timestamp, or duration back from now); default: the last sync.")
    var since: String?

    @OptionGroup var config: ConfigFileOptions

    func validate() throws {
        if let since, TimeExpression.instant(since, now: Date()) == nil {
            throw ValidationError("--since \(since) is not a date, an RFC 3339 timestamp or a duration such as 36h")
        }
    }

    func run() async throws {
        let start = since.flatMap { TimeExpression.instant($0, now: Date()) }
        try await common.run { logger in
            let settings = try await config.settings()
            guard settings.serverAPIKey != nil else {
                throw ConfigurationError(
                    "notifications sync needs the App Store Server API: set APPSTORE_KEY_ID, APPSTORE_ISSUER_ID "
                        + "and APPSTORE_PRIVATE_KEY_FILE")
            }
            let connection = try settings.connect()
            try Schema.requireUpToDate(connection)
            let summary = try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: logger) {
                verifier, api in
                try await api?.notificationSync(NotificationApplier(verify: verifier.verifyNotification))
                    .sync(since: start, on: connection)
            }
            guard let summary else {
                FileHandle.standardError.write(Data("reconcile: another notifications sync holds the lock\n".utf8))
                throw ExitStatus.locked
            }
            print(Self.text(summary, settings: settings))
            if summary.unanswered != nil { throw ExitStatus.failed }
        }
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
