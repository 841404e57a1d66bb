import ArgumentParser
import Foundation
import Logging
import Reconciliation

struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate configuration, database, input relations, Apple endpoints, roots and keys.",
        discussion: "Prints one pass/fail line per check and exits 0 when all pass, 1 when one fails, 64 when the "
            + "configuration itself is wrong."
    )

    @OptionGroup var common: CommonOptions

    @OptionGroup var config: ConfigFileOptions

    @Flag(name: .customLong("alert-test"), help: "Also send a test message to RECONCILE_ALERT_WEBHOOK_URL.")
    var alertTest = false

    func run() async throws {
        _ = common.makeLogger()
        let settings: Settings
        do {
            settings = try await config.settings()
        } catch {
            print("FAIL configuration: \(error)")
            throw ExitStatus.usage
        }
        var results = [CheckResult(
            "configuration", passed: true,
            "bundles \(settings.bundleIDs.joined(separator: ", ")); environment \(settings.environment.rawValue); "
                + "receipts via \(settings.receiptVerification.rawValue)")]
        results += Preflight.database(settings)
        results += await Preflight.apple(settings)
        results += await Preflight.webhook(settings)
        if alertTest { results.append(await Self.alertTest(settings)) }
        if let path = settings.policyFile {
            do {
                let policies = try PolicyFile.load(path: path)
                results.append(CheckResult("policies", passed: true, "\(path): \(policies.rules.count) rule(s)"))
            } catch {
                results.append(CheckResult("policies", passed: false, "\(error)"))
            }
        }
        for result in results {
            print("\(result.passed ? "pass" : "FAIL") \(result.name): \(result.detail)")
        }
        if results.contains(where: { !$0.passed }) { throw ExitStatus.failed }
    }

    /// `--alert-test`: a test message queued and sent now, as a run's alert is.
    static func alertTest(_ settings: Settings) async -> CheckResult {
        guard let delivery = AlertDelivery(settings: settings, logger: Logger(label: "check")) else {
            return CheckResult("alert test", passed: false, "RECONCILE_ALERT_WEBHOOK_URL is not set")
        }
        do {
            let connection = try settings.connect()
            _ = try RunAlerts.queueTest(settings: settings, on: connection)
            let outcome = try await delivery.deliver(on: connection)
            return outcome.failed == 0
                ? CheckResult("alert test", passed: true, "sent (\(settings.alerts.format.rawValue))")
                : CheckResult("alert test", passed: false, "not sent: \(outcome.lastError ?? "unknown")")
        } catch {
            return CheckResult("alert test", passed: false, "\(error)")
        }
    }
}
