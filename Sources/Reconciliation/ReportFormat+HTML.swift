import Foundation

extension ReportFormat {
    /// `report.html`'s policy, in the file itself so it holds when the file is opened from disk
    /// too: inline CSS and SVG only; nothing loads, runs, submits or changes the base URL.
    /// (`frame-ancestors` is ignored in a meta tag; the web page sends it as a header.)
    public static let reportCSP =
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

    /// `report.html`: one self-contained page (inline CSS and SVG, no script, no network) with the
    /// summary, findings by kind, findings by purchase day, value at risk and the findings table,
    /// in the reader's language and time zone. Every value is escaped: user and product ids come
    /// from clients, and catalog text is escaped too.
    static func htmlHeader(_ report: RunReport, _ reader: Reader) -> String {
        let e = HTMLText.display
        let t = reader.catalog
        let title = t.text("report.title", ["run": String(report.runID)])
        let meta = [
            t.text("report.window", [
                "since": report.since.map { reader.minute($0) } ?? t["report.from_beginning"], "until": reader.minute(report.until),
            ]),
            t.environment(report.environment),
            t.text("report.started", ["date": reader.minute(report.startedAt)]),
            t.text("report.finished", ["date": reader.minute(report.finishedAt)]),
        ]
        var page = """
            <!DOCTYPE html>
            <html lang="\(reader.language.rawValue)"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(reportCSP)">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(e(title))</title>
            <style>\(reportCSS)</style></head><body><main>
            <header><h1>\(e(title))\(report.dryRun ? " <small>\(e(t["report.dry_run"]))</small>" : "")</h1>
            <span class="badge status-\(e(report.status.rawValue))">\(e(t.runStatus(report.status.rawValue)))</span></header>
            <p class="meta">\(meta.map(e).joined(separator: " · "))</p>

            """
        let verification = report.verification
        let cards: [(String, String, String)] = [
            ("report.card_open", String(report.openFindings), report.openFindings == 0 ? "good" : "warn"),
            ("report.card_new", String(report.newFindings), report.newFindings == 0 ? "good" : "warn"),
            ("report.card_auto_resolved", report.dryRun ? "—" : String(report.changes.autoResolved), ""),
            ("report.card_uploads", String(verification.uploads), ""),
            ("report.card_verified", String(verification.verified), ""),
            ("report.card_invalid", String(verification.invalid), verification.invalid == 0 ? "" : "warn"),
            ("report.card_retrying", String(verification.retry), verification.retry == 0 ? "" : "warn"),
        ]
        page += "<section class=\"cards\">"
        for (label, value, tone) in cards {
            page += "<div class=\"card \(tone)\"><div class=\"value\">\(e(value))</div><div class=\"label\">\(e(t[label]))</div></div>"
        }
        page += "</section>\n"
        if verification.retry > 0 {
            page += "<p class=\"notice\">\(e(t.text("report.retrying_notice", ["count": String(verification.retry)])))</p>\n"
        }
        let byDay = t.text("report.by_day", ["zone": "UTC"])
        page += "<section class=\"charts\"><div class=\"chart\"><h2>\(e(t["report.by_kind"]))</h2>"
            + kindChart(report, t) + "</div>"
        page += "<div class=\"chart\"><h2>\(e(byDay))</h2>" + dayChart(report.summary, t, label: byDay) + "</div></section>\n"
        page += "<section><h2>\(e(t["report.value_at_risk"]))</h2>" + valueAtRisk(report, reader) + "</section>\n"
        if report.hasRefundActivity {
            page += "<section><h2>\(e(t["report.refund_activity"]))</h2>"
                + "<p>\(e(t.text("report.notifications_line", report.notifications.catalogValues)))</p>"
                + "<p>\(e(t.text("report.consumption_line", report.consumption.catalogValues)))</p>"
            if report.notifications.undelivered > 0 {
                page += "<p class=\"notice\">"
                    + "\(e(t.text("report.undelivered_notice", ["count": String(report.notifications.undelivered)])))</p>"
            }
            page += "</section>\n"
        }
        page += "<section><h2>\(e(t["report.findings"]))</h2>"
        guard report.openFindings > 0 else { return page + "<p class=\"empty\">\(e(t["report.no_findings"]))</p>" }
        let columns = ["item", "kind", "severity", "transaction", "user", "product", "purchased", "amount", "action"]
        return page + "<table><thead><tr>"
            + columns.map { "<th\($0 == "amount" ? " class=\"num\"" : "")>\(e(t["report.column_\($0)"]))</th>" }.joined()
            + "</tr></thead><tbody>\n"
    }

    static func htmlRow(_ finding: RunReport.Finding, _ reader: Reader) -> String {
        let e = HTMLText.display
        let t = reader.catalog
        let amount = finding.amountMilli.map { reader.money(milli: $0, currency: finding.currency ?? "") } ?? ""
        let new = finding.isNew ? " <span class=\"new\">\(e(t["report.new"]))</span>" : ""
        let severity = finding.kind.severity.rawValue
        let head = "<tr><td>\(finding.reviewItemID.map(String.init) ?? "—")\(new)</td>"
            + "<td>\(e(t.kind(finding.kind)))</td><td class=\"nowrap\"><span class=\"sev sev-\(severity)\">"
            + "\(e(t.severity(severity)))</span></td>"
        return head
            + "<td><code>\(e(finding.transactionID ?? "—"))</code></td><td>\(e(finding.userID ?? "—"))</td>"
            + "<td>\(e(finding.productID ?? "—"))</td>"
            + "<td class=\"nowrap\">\(e(finding.purchaseDate.map { reader.day($0) } ?? "—"))</td>"
            + "<td class=\"num nowrap\">\(e(amount))</td><td>\(e(t.suggestedAction(finding.kind.suggestedAction)))</td></tr>\n"
    }

    static func htmlFooter(_ report: RunReport, _ reader: Reader) -> String {
        let t = reader.catalog
        return (report.openFindings > 0 ? "</tbody></table>" : "") + "</section>\n"
            + "<footer>\(HTMLText.escape(t.text("report.dates_note", ["zone": reader.zoneName]))) "
            + "\(HTMLText.escape(t["report.footer"]))</footer></main></body></html>\n"
    }

    static let severityColor = ["high": "#dc2626", "medium": "#f59e0b", "low": "#65a30d"]

    private static func kindChart(_ report: RunReport, _ t: Catalog) -> String {
        let e = HTMLText.escape
        let counts = report.counts
        let rows = FindingKind.allCases.map { ($0, counts[$0.rawValue] ?? 0) }
        let maximum = max(1, rows.map(\.1).max() ?? 1)
        let rowHeight = 26, labelWidth = 170, barWidth = 260
        var svg = "<svg role=\"img\" aria-label=\"\(e(t["report.by_kind"]))\" viewBox=\"0 0 \(labelWidth + barWidth + 50) "
            + "\(rows.count * rowHeight + 4)\" width=\"100%\">"
        for (index, (kind, count)) in rows.enumerated() {
            let y = index * rowHeight + 2
            let width = count == 0 ? 0 : max(2, barWidth * count / maximum)
            svg += "<text x=\"\(labelWidth - 8)\" y=\"\(y + 17)\" text-anchor=\"end\" class=\"axis\">"
                + "\(e(t.kind(kind)))</text>"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 4)\" width=\"\(barWidth)\" height=\"18\" rx=\"3\" fill=\"#f1f5f9\"/>"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 4)\" width=\"\(width)\" height=\"18\" rx=\"3\" "
                + "fill=\"\(severityColor[kind.severity.rawValue] ?? "#475569")\"><title>\(e(t.kind(kind))): \(count)</title></rect>"
            svg += "<text x=\"\(labelWidth + width + 6)\" y=\"\(y + 17)\" class=\"count\">\(count)</text>"
        }
        return svg + "</svg><p class=\"legend\">"
            + ["high", "medium", "low"].map {
                "<span style=\"background:\(severityColor[$0] ?? "#475569")\"></span>\(e(t.severity($0)))"
            }.joined(separator: " ") + "</p>"
    }

    /// Days are UTC days: the summary counts them in SQL before any reader is known.
    private static func dayChart(_ summary: RunReport.FindingSummary, _ t: Catalog, label: String) -> String {
        let e = HTMLText.escape
        let perDay = summary.byPurchaseDay
        let undated = summary.undated
        guard let first = perDay.keys.min(), let last = perDay.keys.max() else {
            return "<p class=\"empty\">\(e(t["report.no_dated"]))</p>"
                + (undated > 0 ? "<p class=\"legend\">\(e(t.text("report.undated", ["count": String(undated)])))</p>" : "")
        }
        // At most 90 days: a window over a long history shows its most recent quarter.
        let start = max(first, last - 89)
        let days = Array(start...last)
        let maximum = max(1, days.map { perDay[$0] ?? 0 }.max() ?? 1)
        let height = 160, top = 14, bottom = 34
        // A fixed drawing width, so the text keeps its size however few days there are.
        let width = 480
        let step = max(6, min(60, 440 / days.count))
        let left = 34 + (440 - step * days.count) / 2
        var svg = "<svg role=\"img\" aria-label=\"\(e(label))\" viewBox=\"0 0 \(width) "
            + "\(height + top + bottom)\" width=\"100%\">"
        svg += "<line x1=\"30\" y1=\"\(top + height)\" x2=\"\(width)\" y2=\"\(top + height)\" stroke=\"#cbd5e1\"/>"
        svg += "<text x=\"26\" y=\"\(top + 4)\" text-anchor=\"end\" class=\"axis\">\(maximum)</text>"
        svg += "<text x=\"26\" y=\"\(top + height)\" text-anchor=\"end\" class=\"axis\">0</text>"
        let labelEvery = max(1, days.count / 6)
        for (index, day) in days.enumerated() {
            let count = perDay[day] ?? 0
            let barHeight = count == 0 ? 0 : max(2, height * count / maximum)
            let x = left + index * step
            let label = String(TimeExpression.format(Date(timeIntervalSince1970: Double(day) * 86_400)).prefix(10))
            svg += "<rect x=\"\(x)\" y=\"\(top + height - barHeight)\" width=\"\(max(2, step - 3))\" height=\"\(barHeight)\" "
                + "rx=\"2\" fill=\"#2563eb\"><title>\(label): \(count)</title></rect>"
            if index % labelEvery == 0 || index == days.count - 1 {
                svg += "<text x=\"\(x)\" y=\"\(top + height + 16)\" class=\"axis\">\(label.dropFirst(5))</text>"
            }
        }
        svg += "</svg>"
        if undated > 0 {
            svg += "<p class=\"legend\">\(e(t.text("report.undated_long", ["count": String(undated)])))</p>"
        }
        return svg
    }

    private static func valueAtRisk(_ report: RunReport, _ reader: Reader) -> String {
        let e = HTMLText.escape
        let t = reader.catalog
        let risk = report.valueAtRisk
        guard !risk.isEmpty else { return "<p class=\"empty\">\(e(t["report.no_priced"]))</p>" }
        var totals: [String: Int64] = [:]
        for entry in risk { totals[entry.currency, default: 0] += entry.amountMilli }
        var html = "<div class=\"totals\">"
        for (currency, amount) in totals.sorted(by: { $0.key < $1.key }) {
            html += "<div class=\"card\"><div class=\"value\">\(e(reader.money(milli: amount, currency: currency)))</div>"
                + "<div class=\"label\">\(e(t.text("report.at_risk", ["currency": currency])))</div></div>"
        }
        html += "</div><table><thead><tr><th>\(e(t["report.column_kind"]))</th><th>\(e(t["report.column_currency"]))</th>"
            + "<th class=\"num\">\(e(t["report.column_amount"]))</th></tr></thead><tbody>"
        for entry in risk {
            html += "<tr><td>\(e(t.kind(entry.kind)))</td><td>\(e(entry.currency))</td>"
                + "<td class=\"num\">\(e(reader.money(milli: entry.amountMilli, currency: entry.currency)))</td></tr>"
        }
        return html + "</tbody></table>"
    }

    static let reportCSS = """
        :root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#0f172a;\
        background:#f8fafc}body{margin:0}main{max-width:1100px;margin:0 auto;padding:24px}\
        header{display:flex;align-items:center;gap:12px}h1{font-size:1.6rem;margin:0}h1 small{color:#64748b;\
        font-weight:400}h2{font-size:1.05rem;margin:0 0 10px}.meta{color:#475569;margin:6px 0 18px}\
        .badge{padding:3px 10px;border-radius:999px;font-size:.8rem;background:#e2e8f0}\
        .status-completed{background:#dcfce7;color:#166534}.status-failed{background:#fee2e2;color:#991b1b}\
        .status-completed_with_unresolved{background:#fef3c7;color:#92400e}\
        .cards,.totals{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:18px}.card{background:#fff;border:1px solid \
        #e2e8f0;border-radius:10px;padding:10px 16px;min-width:110px}.card .value{font-size:1.5rem;font-weight:600}\
        .card .label{color:#64748b;font-size:.8rem}.card.warn .value{color:#d97706}.card.good .value{color:#15803d}\
        .charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:16px}\
        .chart,section>table,.notice{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:14px}\
        section{margin-bottom:18px}svg text{font-size:11px;fill:#334155}svg .count{font-weight:600}\
        .legend{color:#64748b;font-size:.8rem}.legend span{display:inline-block;width:10px;height:10px;\
        border-radius:2px;margin:0 4px 0 10px}.notice{background:#fffbeb;border-color:#fde68a}\
        table{width:100%;border-collapse:collapse;font-size:.88rem}th,td{text-align:left;padding:7px 8px;\
        border-bottom:1px solid #e2e8f0;vertical-align:top;overflow-wrap:anywhere}th{color:#475569;font-weight:600;white-space:nowrap}.nowrap{white-space:nowrap}\
        .num{text-align:right;font-variant-numeric:tabular-nums}code{font-size:.85em}.new{background:#dbeafe;\
        color:#1e40af;border-radius:4px;padding:0 5px;font-size:.75rem}.sev{border-radius:4px;padding:1px 6px;\
        font-size:.78rem}.sev-high{background:#fee2e2;color:#b91c1c}.sev-medium{background:#fef3c7;color:#92400e}\
        .sev-low{background:#ecfccb;color:#3f6212}.empty{color:#64748b}footer{color:#94a3b8;font-size:.8rem}
        """
}
