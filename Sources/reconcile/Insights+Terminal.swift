import Foundation
import Reconciliation

/// What `reconcile insights` prints on a terminal: the span, then one table per dimension.
extension Insights {
    var terminalText: String {
        var lines = [
            "purchases \(span.since.map(TimeExpression.format) ?? "beginning") → \(TimeExpression.format(span.until))"
                + (span.store.map { " (\($0.rawValue))" } ?? ""),
        ]
        guard let runID = span.runID, let judgedBefore = span.judgedBefore else {
            lines.append("no nightly run has finished: nothing is judged yet (reconcile run)")
            return lines.joined(separator: "\n")
        }
        lines.append("judged by run \(runID): purchases before \(TimeExpression.format(judgedBefore))")
        lines.append("overall \(overall.purchases) purchases, \(overall.leaks) leaked (\(Self.percent(overall.rate)))")
        let flagged = tables.reduce(0) { $0 + $1.segments.filter(\.flagged).count }
        lines.append(
            flagged == 0
                ? "no segment flagged"
                : "\(flagged) segment\(flagged == 1 ? "" : "s") FLAGGED: read \(flagged == 1 ? "it" : "them") first")
        for table in tables {
            lines.append("")
            lines.append("by \(table.dimension.title):")
            guard !table.segments.isEmpty else {
                lines.append("  no judged purchases")
                continue
            }
            let rows = table.segments.map { segment -> [String] in
                let findings = FindingKind.allCases.compactMap { kind in
                    segment.counts[kind].map { "\(kind.rawValue) \($0)" }
                }
                let risk = RunReport.ValueAtRisk.totals(segment.valueAtRisk).sorted { $0.key < $1.key }.map {
                    Money(milli: $0.value, currency: $0.key).text()
                }
                return [
                    table.dimension.label(of: segment.value), String(segment.purchases),
                    String(segment.leaks), Self.percent(segment.leakRate.rate),
                    Self.percent(segment.leakRate.lowerBound),
                    findings.isEmpty ? "—" : findings.joined(separator: ", "),
                    risk.isEmpty ? "—" : risk.joined(separator: ", "),
                    segment.flagged ? "FLAGGED" : "",
                ]
            }
            lines.append(ReviewOutput.table(
                header: ["VALUE", "PURCHASES", "LEAKS", "RATE", "LOW", "FINDINGS", "AT RISK", ""],
                rows: rows, widths: [20, 9, 5, 7, 7, 30, 18, 7]
            ).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        }
        return lines.joined(separator: "\n")
    }

    /// 0.05 → "5.0 %".
    static func percent(_ rate: Double) -> String { String(format: "%.1f %%", rate * 100) }
}
