import Foundation
import Reconciliation

/// The short summary `reconcile run` prints at the end of a run.
extension RunReport {
    var terminalSummary: String {
        let report = self
        var lines = [
            "run \(report.runID): \(report.status)\(report.dryRun ? " (dry run)" : "")",
            "  window  \(report.since.map(TimeExpression.format) ?? "beginning") → \(TimeExpression.format(report.until))",
            "  uploads \(report.verification.uploads): \(report.verification.verified) verified, "
                + "\(report.verification.invalid) invalid, \(report.verification.retry) to retry",
            "  findings \(report.openFindings) open (\(report.newFindings) new, "
                + "\(report.changes.autoResolved) auto-resolved)",
        ]
        let counts = report.counts
        for kind in FindingKind.allCases where counts[kind.rawValue, default: 0] > 0 {
            lines.append("    \(kind.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0)) \(counts[kind.rawValue]!)")
        }
        for entry in report.valueAtRisk {
            let amount = Money(milli: entry.amountMilli, currency: entry.currency)
            lines.append("  at risk \(entry.kind.rawValue): \(amount.text())")
        }
        if let play = report.play {
            // The report's own lines, from the English catalog (the CLI stays English).
            let said = play.summaryLines(Catalog.of(.english))
            lines += (said.lines + said.notices).map { "  play    " + $0 }
        }
        if let directory = report.reportDirectory { lines.append("  report  \(directory)/report.md") }
        return lines.joined(separator: "\n")
    }
}
