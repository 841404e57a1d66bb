import Foundation

/// The files of a report. Each is written as a header (the summary), one piece per finding, and
/// a footer, so the findings can stream through from PostgreSQL.
enum ReportFormat: CaseIterable {
    case json, markdown, html, csv

    var fileName: String {
        switch self {
        case .json: "report.json"
        case .markdown: "report.md"
        case .html: "report.html"
        case .csv: "review.csv"
        }
    }

    /// Everything before the findings. `report.md` and `report.html` are written for `reader`; the
    /// JSON and the CSV are for programs and stay English.
    func header(_ report: RunReport, reader: Reader = .standard) -> String {
        switch self {
        case .json: Self.jsonHeader(report)
        case .markdown: Self.markdownHeader(report, reader)
        case .html: Self.htmlHeader(report, reader)
        case .csv: Self.csvHeader
        }
    }

    /// The piece for the `index`th finding (from 0).
    func row(_ finding: RunReport.Finding, index: Int, reader: Reader = .standard) -> String {
        switch self {
        case .json: (index == 0 ? "\n" : ",\n") + "    " + Self.jsonFinding(finding)
        case .markdown: Self.markdownRow(finding, reader)
        case .html: Self.htmlRow(finding, reader)
        case .csv: Self.csvRow(finding)
        }
    }

    /// The piece for the `index`th finding from its rows rendered ahead (`RenderedRows`).
    func row(_ rows: RenderedRows, index: Int) -> String {
        switch self {
        case .json: (index == 0 ? "\n" : ",\n") + "    " + rows.json
        case .markdown: rows.markdown
        case .html: rows.html
        case .csv: rows.csv
        }
    }

    /// A finding's row in every format, rendered as for a finding that is not new: what
    /// `ReportRowCache` keeps so that a run carrying the item over unjudged writes it without
    /// rendering it again.
    struct RenderedRows: Sendable, Equatable {
        var json: String
        var markdown: String
        var html: String
        var csv: String

        init(json: String, markdown: String, html: String, csv: String) {
            self.json = json
            self.markdown = markdown
            self.html = html
            self.csv = csv
        }

        init(_ finding: RunReport.Finding, reader: Reader) {
            var old = finding
            old.isNew = false
            self.init(
                json: ReportFormat.jsonFinding(old), markdown: ReportFormat.markdownRow(old, reader),
                html: ReportFormat.htmlRow(old, reader), csv: ReportFormat.csvRow(old))
        }
    }

    func footer(_ report: RunReport, reader: Reader = .standard) -> String {
        switch self {
        case .json: "\n  ]\n}\n"
        case .markdown: ""
        case .html: Self.htmlFooter(report, reader)
        case .csv: ""
        }
    }

    /// The whole file for findings held in memory.
    func text(_ report: RunReport, _ findings: [RunReport.Finding], reader: Reader = .standard) -> String {
        header(report, reader: reader) + findings.enumerated().map { row($1, index: $0, reader: reader) }.joined()
            + footer(report, reader: reader)
    }
}

// MARK: - report.json

extension ReportFormat {
    /// Everything before the findings, in the order of SPEC section 10.
    static func jsonHeader(_ report: RunReport) -> String {
        let s = JSONText.string
        let v = report.verification
        let statuses = v.byAppleStatus.sorted { $0.key < $1.key }.map { "\(s($0.key)): \($0.value)" }
        let counts = FindingKind.allCases.map { "\(s($0.rawValue)): \(report.summary.byKind[$0] ?? 0)" }
        let risk = report.valueAtRisk.map {
            "{\"kind\": \(s($0.kind.rawValue)), \"currency\": \(s($0.currency)), \"amount_milli\": \($0.amountMilli)}"
        }
        // Amounts in major units (SPEC section 17: 30 is ¥30.00).
        let policies = report.policies.map { tally in
            let amounts = tally.amounts.map { "\(s($0.currency)): \($0.majorUnitsJSON)" }
            return "\(s(tally.rule)): {\"decided\": \(tally.decided), \"amount\": {\(amounts.joined(separator: ", "))}}"
        }
        return """
            {
              "run_id": \(report.runID),
              "status": \(s(report.status.rawValue)),
              "started_at": \(s(TimeExpression.format(report.startedAt))),
              "finished_at": \(s(TimeExpression.format(report.finishedAt))),
              "window": {"since": \(JSONText.optional(report.since.map(TimeExpression.format))), \
            "until": \(s(TimeExpression.format(report.until)))},
              "environment": \(s(report.environment.rawValue)),
              "verification": {"uploads": \(v.uploads), "verified": \(v.verified), "invalid": \(v.invalid), \
            "retry": \(v.retry), "by_apple_status": {\(statuses.joined(separator: ", "))}},
              "counts": {\(counts.joined(separator: ", "))},
              "value_at_risk": [\(risk.joined(separator: ", "))],
              "notifications": {"synced": \(report.notifications.synced), "undelivered": \(report.notifications.undelivered)},
              "consumption": {"answered": \(report.consumption.answered), "expired": \(report.consumption.expired), \
            "refunded": \(report.consumption.refunded), "declined": \(report.consumption.declined)},
              "policies": {\(policies.joined(separator: ", "))},\(report.play.map(playJSON) ?? "")
              "findings": [
            """
    }

    /// report.json's `"play"` line (SPEC section 18), with its newline and indent; a run with Play
    /// off has none.
    static func playJSON(_ play: PlayRunSummary) -> String {
        "\n  \"play\": {\"refunds_unchecked\": \(play.refundsUnchecked), \"voided_gap\": \(play.voidedGap), "
            + "\"voids_recorded\": \(play.voidsRecorded), \"gap_purchases_asked\": \(play.gapPurchasesAsked), "
            + "\"orders_asked\": \(play.ordersAsked), \"orders_unanswered\": \(play.ordersUnanswered), "
            + "\"notifications_asked\": \(play.notificationsAsked), \"subscriptions_asked\": \(play.subscriptionsAsked), "
            + "\"renewal_orders_stored\": \(play.renewalOrdersStored), \"acknowledged\": \(play.acknowledged), "
            + "\"voided_unacknowledged\": \(play.voidedUnacknowledged)},"
    }

    /// One finding on one line; its evidence is PostgreSQL's JSON text, embedded as it is.
    static func jsonFinding(_ finding: RunReport.Finding) -> String {
        let s = JSONText.string, o = JSONText.optional
        let evidence = finding.evidence.isEmpty ? "{}" : finding.evidence
        return "{\"review_item_id\": \(finding.reviewItemID.map(String.init) ?? "null"), "
            + "\"new\": \(finding.isNew), \"kind\": \(s(finding.kind.rawValue)), "
            + "\"store\": \(s(finding.store.rawValue)), "
            + "\"severity\": \(s(finding.kind.severity.rawValue)), \"transaction_id\": \(o(finding.transactionID)), "
            + "\"original_transaction_id\": \(o(finding.originalTransactionID)), \"user_id\": \(o(finding.userID)), "
            + "\"product_id\": \(o(finding.productID)), \"suggested_action\": \(s(finding.kind.suggestedAction.rawValue)), "
            + "\"evidence\": \(evidence)}"
    }
}

// MARK: - report.md

extension ReportFormat {
    static func markdownHeader(_ report: RunReport, _ reader: Reader) -> String {
        let t = reader.catalog
        let v = report.verification
        var lines = [
            "# " + t.text("report.title", ["run": String(report.runID)]) + (report.dryRun ? " " + t["report.dry_run"] : ""),
            "",
            "- " + t.text("report.status", ["status": "**\(t.runStatus(report.status))**"]),
            "- " + t.text("report.window", [
                "since": report.since.map { reader.minute($0) } ?? t["report.from_beginning"], "until": reader.minute(report.until),
            ]),
            "- " + t.text("report.environment", ["environment": t.environment(report.environment)]),
            "- " + t.text("report.uploads_line", [
                "uploads": String(v.uploads), "verified": String(v.verified), "invalid": String(v.invalid),
                "retry": String(v.retry),
            ]),
            "- " + t.text(report.dryRun ? "report.findings_line" : "report.findings_line_auto", [
                "open": String(report.openFindings), "new": String(report.newFindings),
                "auto": String(report.changes.autoResolved),
            ]),
            "", "## " + t["report.by_kind"], "",
            "| \(t["report.column_kind"]) | \(t["report.column_severity"]) | \(t["report.column_count"]) |", "|---|---|---|",
        ]
        let counts = report.counts
        for kind in FindingKind.allCases {
            lines.append("| \(t.kind(kind)) | \(t.severity(kind.severity)) | \(counts[kind.rawValue] ?? 0) |")
        }
        let risk = report.valueAtRisk
        if !risk.isEmpty {
            lines += ["", "## " + t["report.value_at_risk"], "",
                      "| \(t["report.column_kind"]) | \(t["report.column_currency"]) | \(t["report.column_amount"]) |",
                      "|---|---|---|"]
            for entry in risk {
                lines.append(
                    "| \(t.kind(entry.kind)) | \(entry.currency) | \(reader.money(milli: entry.amountMilli, currency: entry.currency)) |")
            }
        }
        if v.retry > 0 {
            lines += ["", t.text("report.retrying_notice", ["count": String(v.retry)])]
        }
        if report.hasRefundActivity {
            lines += ["", "## " + t["report.refund_activity"], "",
                      "- " + t.text("report.notifications_line", report.notifications.catalogValues),
                      "- " + t.text("report.consumption_line", report.consumption.catalogValues)]
            if report.notifications.undelivered > 0 {
                lines += ["", t.text("report.undelivered_notice", ["count": String(report.notifications.undelivered)])]
            }
        }
        if let play = report.play {
            let said = play.summaryLines(t)
            lines += ["", "## " + t["report.play.heading"], ""] + said.lines.map { "- " + $0 }
            for notice in said.notices { lines += ["", notice] }
        }
        if !report.policies.isEmpty {
            lines += ["", "## " + t["report.policies"], "",
                      "| \(t["report.column_rule"]) | \(t["report.column_decided"]) | \(t["report.column_amount"]) |",
                      "|---|---|---|"]
            for tally in report.policies {
                lines.append("| \(MarkdownText.cell(tally.rule)) | \(tally.decided) | \(tally.amountText(reader)) |")
            }
        }
        lines += ["", "## " + t["report.findings"], ""]
        if report.openFindings == 0 {
            lines.append(t["report.no_findings_short"])
        } else {
            let columns = ["item", "new", "kind", "severity", "store", "transaction", "user", "product", "action"]
            lines += ["| " + columns.map { t["report.column_\($0)"] }.joined(separator: " | ") + " |",
                      "|" + String(repeating: "---|", count: columns.count)]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func markdownRow(_ finding: RunReport.Finding, _ reader: Reader) -> String {
        func cell(_ text: String?) -> String {
            guard let text else { return "—" }
            return MarkdownText.cell(text)
        }
        let t = reader.catalog
        return "| \(finding.reviewItemID.map(String.init) ?? "—") | \(finding.isNew ? t["report.new"] : "") | "
            + "\(t.kind(finding.kind)) | \(t.severity(finding.kind.severity)) | \(t.store(finding.store)) | "
            + "\(cell(finding.transactionID)) | "
            + "\(cell(finding.userID)) | \(cell(finding.productID)) | \(t.suggestedAction(finding.kind.suggestedAction)) |\n"
    }
}

// MARK: - review.csv

extension ReportFormat {
    static let csvHeader = ["review_item_id", "new", "kind", "severity", "transaction_id", "original_transaction_id",
                            "user_id", "product_id", "suggested_action", "amount_milli", "currency", "store"]
        .joined(separator: ",") + "\r\n"

    static func csvRow(_ finding: RunReport.Finding) -> String {
        [
            finding.reviewItemID.map(String.init) ?? "", finding.isNew ? "true" : "false", finding.kind.rawValue,
            finding.kind.severity.rawValue, finding.transactionID ?? "", finding.originalTransactionID ?? "",
            finding.userID ?? "", finding.productID ?? "", finding.kind.suggestedAction.rawValue,
            finding.amountMilli.map(String.init) ?? "", finding.currency ?? "", finding.store.rawValue,
        ].map(ReportWriter.csvField).joined(separator: ",") + "\r\n"
    }
}

/// A report file written through a buffer under a temporary name, and renamed into place on
/// commit, so a reader never sees half a file.
final class PartialFile {
    private let url: URL
    private let temporary: URL
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private static let flushAt = 1 << 16

    init(_ url: URL) throws {
        self.url = url
        temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw ReportWriteError(path: temporary.path)
        }
        handle = try FileHandle(forWritingTo: temporary)
        buffer.reserveCapacity(Self.flushAt)
    }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.flushAt { try flush() }
    }

    func commit() throws {
        try flush()
        try handle.close()
        _ = try? FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: temporary, to: url)
    }

    func abandon() {
        try? handle.close()
        try? FileManager.default.removeItem(at: temporary)
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// A report file could not be created (a missing or read-only report folder).
struct ReportWriteError: Error, CustomStringConvertible {
    let path: String
    var description: String { "cannot create the report file \(path): check RECONCILE_REPORT_DIR and its permissions" }
}

// MARK: - Google Play's summary lines

extension PlayRunSummary {
    /// What the report's summary says about Google Play on a run with Play on (SPEC section 18),
    /// in the catalog's language: `lines`, always the purchases the job acknowledged; `notices`,
    /// what needs a person: refunds unchecked (no service account), a gap in the voided-purchases
    /// list, and purchases Google refunded for want of an acknowledgement (the app's acknowledge is
    /// broken). report.md, report.html and the terminal summary print these and nothing else.
    public func summaryLines(_ t: Catalog) -> (lines: [String], notices: [String]) {
        var notices: [String] = []
        if refundsUnchecked { notices.append(t["report.play.refunds_unchecked"]) }
        if voidedGap { notices.append(t["report.play.voided_gap"]) }
        if voidedUnacknowledged > 0 {
            notices.append(t.text("report.play.voided_unacknowledged", ["count": String(voidedUnacknowledged)]))
        }
        return ([t.text("report.play.acknowledged", ["count": String(acknowledged)])], notices)
    }
}
