import Foundation

/// Writes `DIR/run-<id>/report.json`, `report.md`, `report.html` and `review.csv`.
public struct ReportWriter: Sendable {
    /// The report root (`RECONCILE_REPORT_DIR` or `--report-dir`).
    public let root: String

    /// Creates a writer under a root folder.
    public init(root: String) { self.root = root }

    /// Writes every file of a run's report; returns the run's folder. Files are written to a
    /// temporary name and renamed, so a reader never sees half a report.
    @discardableResult
    public func write(_ report: RunReport) throws -> String {
        let directory = URL(fileURLWithPath: root).appendingPathComponent("run-\(report.runID)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try atomically(Self.json(report), to: directory.appendingPathComponent("report.json"))
        Failpoint.pass("report.write")
        try atomically(Data(Self.markdown(report).utf8), to: directory.appendingPathComponent("report.md"))
        try atomically(Data(Self.html(report).utf8), to: directory.appendingPathComponent("report.html"))
        try atomically(Data(Self.csv(report.findings).utf8), to: directory.appendingPathComponent("review.csv"))
        return directory.path
    }

    private func atomically(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial")
        try data.write(to: temporary)
        _ = try? FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: temporary, to: url)
    }

    /// `report.json`, exactly the shape of SPEC section 10.
    public static func json(_ report: RunReport) throws -> Data {
        var verification: [String: Any] = [
            "uploads": report.verification.uploads, "verified": report.verification.verified,
            "invalid": report.verification.invalid, "retry": report.verification.retry,
        ]
        verification["by_apple_status"] = report.verification.byAppleStatus
        let findings: [[String: Any]] = try report.findings.map { finding in
            [
                "review_item_id": finding.reviewItemID.map { $0 as Any } ?? NSNull(),
                "new": finding.isNew,
                "kind": finding.kind.rawValue,
                "severity": finding.kind.severity,
                "transaction_id": finding.transactionID ?? NSNull(),
                "original_transaction_id": finding.originalTransactionID ?? NSNull(),
                "user_id": finding.userID ?? NSNull(),
                "product_id": finding.productID ?? NSNull(),
                "suggested_action": finding.kind.suggestedAction,
                "evidence": try JSONSerialization.jsonObject(with: Data(finding.evidence.utf8), options: [.fragmentsAllowed]),
            ]
        }
        let object: [String: Any] = [
            "run_id": report.runID,
            "status": report.status,
            "started_at": TimeExpression.format(report.startedAt),
            "finished_at": TimeExpression.format(report.finishedAt),
            "window": [
                "since": report.since.map { TimeExpression.format($0) as Any } ?? NSNull(),
                "until": TimeExpression.format(report.until),
            ],
            "environment": report.environment,
            "verification": verification,
            "counts": report.counts,
            "value_at_risk": report.valueAtRisk.map {
                ["kind": $0.kind.rawValue, "currency": $0.currency, "amount_milli": $0.amountMilli] as [String: Any]
            },
            "findings": findings,
        ]
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    /// `report.md`: the summary a person reads first.
    public static func markdown(_ report: RunReport) -> String {
        func cell(_ text: String?) -> String {
            (text ?? "—").replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
        }
        var lines = [
            "# Reconciliation run \(report.runID)\(report.dryRun ? " (dry run)" : "")", "",
            "- Status: **\(report.status)**",
            "- Window: \(report.since.map(TimeExpression.format) ?? "beginning") → \(TimeExpression.format(report.until))",
            "- Environment: \(report.environment)",
            "- Uploads: \(report.verification.uploads) (verified \(report.verification.verified), invalid "
                + "\(report.verification.invalid), still retrying \(report.verification.retry))",
            "- Findings: \(report.findings.count) open, \(report.newFindings) new"
                + (report.dryRun ? "" : ", \(report.changes.autoResolved) auto-resolved"),
            "", "## Findings by kind", "", "| kind | severity | count |", "|---|---|---|",
        ]
        let counts = report.counts
        for kind in FindingKind.allCases {
            lines.append("| \(kind.rawValue) | \(kind.severity) | \(counts[kind.rawValue] ?? 0) |")
        }
        let risk = report.valueAtRisk
        if !risk.isEmpty {
            lines += ["", "## Value at risk", "", "| kind | currency | amount |", "|---|---|---|"]
            for entry in risk {
                lines.append("| \(entry.kind.rawValue) | \(entry.currency) | \(formatMilli(entry.amountMilli)) |")
            }
        }
        if report.verification.retry > 0 {
            lines += ["", "\(report.verification.retry) uploads are still being retried: nothing that depends on "
                + "them was judged. The next run tries them first."]
        }
        lines += ["", "## Findings", ""]
        if report.findings.isEmpty {
            lines.append("No open findings.")
        } else {
            lines += ["| item | new | kind | severity | transaction | user | product | action |",
                      "|---|---|---|---|---|---|---|---|"]
            for finding in report.findings {
                lines.append(
                    "| \(finding.reviewItemID.map(String.init) ?? "—") | \(finding.isNew ? "new" : "") | "
                        + "\(finding.kind.rawValue) | \(finding.kind.severity) | \(cell(finding.transactionID)) | "
                        + "\(cell(finding.userID)) | \(cell(finding.productID)) | \(finding.kind.suggestedAction) |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `review.csv`: one line per finding, safe to open in a spreadsheet.
    public static func csv(_ findings: [RunReport.Finding]) -> String {
        var lines = [["review_item_id", "new", "kind", "severity", "transaction_id", "original_transaction_id",
                      "user_id", "product_id", "suggested_action", "amount_milli", "currency"].joined(separator: ",")]
        for finding in findings {
            lines.append([
                finding.reviewItemID.map(String.init) ?? "", finding.isNew ? "true" : "false", finding.kind.rawValue,
                finding.kind.severity, finding.transactionID ?? "", finding.originalTransactionID ?? "",
                finding.userID ?? "", finding.productID ?? "", finding.kind.suggestedAction,
                finding.amountMilli.map(String.init) ?? "", finding.currency ?? "",
            ].map(csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Quotes a CSV field, and defuses spreadsheet formulas (user and product ids come from clients).
    public static func csvField(_ value: String) -> String {
        var text = value
        if let first = text.first, "=+-@\t\r".contains(first) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Formats milliunits as a decimal amount (`6000` → `6.000`).
    public static func formatMilli(_ amount: Int64) -> String {
        let sign = amount < 0 ? "-" : ""
        let magnitude = amount.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
