import Foundation
import Mustache
@testable import Reconciliation
import TestSupport
import Testing

/// `report.html` (SPEC section 10): self-contained, charts present, every value escaped.
@Suite("report.html")
struct ReportHTMLTests {
    static func finding(
        _ kind: FindingKind, user: String, product: String = "coin42", amount: Int64? = 6000, day: Int = 0
    ) -> RunReport.Finding {
        RunReport.Finding(
            reviewItemID: 7, isNew: true, kind: kind, transactionID: "t-\(kind.rawValue)", originalTransactionID: nil,
            userID: user, productID: product, evidence: "{}", amountMilli: amount, currency: amount == nil ? nil : "CNY",
            // Apple does not know an unverified delivery, so it has no purchase date.
            purchaseDate: kind == .unverifiedDelivery ? nil : Date(timeIntervalSince1970: 1_795_000_000 + Double(day) * 86_400))
    }

    static let findings = [
        finding(.missedDelivery, user: "<script>alert(1)</script>"),
        finding(.missedDelivery, user: "u2", day: 1),
        finding(.duplicateDelivery, user: "u3", product: "\"><img src=x onerror=alert(2)>", day: 3),
        finding(.unverifiedDelivery, user: "u4", amount: nil),
    ]

    static let report = RunReport(
        runID: 12, status: "completed", startedAt: Date(timeIntervalSince1970: 1_795_300_000),
        finishedAt: Date(timeIntervalSince1970: 1_795_300_190), since: nil,
        until: Date(timeIntervalSince1970: 1_795_300_000), environment: .production, dryRun: false,
        verification: .init(uploads: 10, verified: 9, invalid: 1, retry: 0, byAppleStatus: ["0": 9]),
        summary: RunReport.FindingSummary(findings), changes: Differ.QueueChanges(), timings: [:], reportDirectory: nil)

    /// The head's parts give the template their values by name (`MustacheParent`, not `Mirror`):
    /// each stored value of each part, nested parts and lists of them included, must be given under
    /// its own name, or the template would write nothing in its place.
    @Test func everyPartOfTheHeadGivesEachOfItsValuesByName() {
        var report = Self.report
        report.verification.retry = 2
        report.policies = [PolicyTally(rule: "small refunds", decided: 3)]
        report.notifications.synced = 4
        var checked = 0
        func walk(_ part: Any, _ path: String) {
            let children = Mirror(reflecting: part).children
            if [.collection, .optional].contains(Mirror(reflecting: part).displayStyle) {
                for child in children { walk(child.value, path) }
                return
            }
            guard let parent = part as? MustacheParent else { return }
            for child in children {
                guard let label = child.label else { continue }
                checked += 1
                let isNil = Mirror(reflecting: child.value).displayStyle == .optional
                    && Mirror(reflecting: child.value).children.isEmpty
                #expect(parent.child(named: label) != nil || isNil, "\(path).\(label) is not given by name")
                walk(child.value, path + "." + label)
            }
        }
        walk(ReportPage.Head(report, Reader.standard), "head")
        #expect(checked > 60)
    }

    @Test func isSelfContainedAndEscapesClientValues() {
        let html = ReportWriter.html(Self.report, findings: Self.findings)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        // Nothing is fetched: no external stylesheet, script, image or font.
        #expect(!html.contains("<link") && !html.contains("src=\"http") && !html.contains("url("))
    }

    /// A `<` after U+0600 or a `"` before U+0301 is one grapheme cluster with its neighbour;
    /// the report escapes per scalar, so neither carries a tag through, and bidi controls show.
    @Test func combiningCharactersCarryNoTagAndBidiControlsShow() {
        let findings = [
            Self.finding(.missedDelivery, user: "\u{600}<meta http-equiv=refresh content=0>"),
            Self.finding(.missedDelivery, user: "x\"\u{301} onmouseover=alert(1)", product: "evil\u{202E}gnp.exe"),
        ]
        let html = ReportWriter.html(Self.report, findings: findings)
        #expect(!html.unicodeScalars.split(separator: "<").dropFirst().contains { $0.starts(with: "meta http-equiv=refresh".unicodeScalars) })
        #expect(!html.unicodeScalars.contains("\u{202E}"))
        #expect(html.contains("evil⟨U+202E⟩gnp.exe"))
        let quotes = html.unicodeScalars.indices.filter { html.unicodeScalars[$0] == "\"" }
        #expect(quotes.allSatisfy { html.unicodeScalars.index(after: $0) == html.unicodeScalars.endIndex
            || html.unicodeScalars[html.unicodeScalars.index(after: $0)] != "\u{301}" })
    }

    @Test func carriesItsOwnStrictCSP() {
        let html = ReportWriter.html(Self.report, findings: Self.findings)
        #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"))
        #expect(html.contains("base-uri 'none'; form-action 'none'"))
    }

    @Test func hasTheSummaryChartsAndValueAtRisk() {
        let html = ReportWriter.html(Self.report, findings: Self.findings)
        #expect(html.contains("Reconciliation run 12"))
        #expect(html.contains("<h2>Findings by kind</h2><svg"))
        #expect(html.contains("<h2>Findings by purchase day (UTC)</h2><svg"))
        #expect(html.contains("<title>Missed delivery: 2</title>"))
        // 6.000 CNY per priced finding: three of them, in en_US's currency format.
        #expect(html.contains("CN¥18.00"))
        #expect(html.contains("CNY at risk"))
        #expect(html.contains("1 findings have no purchase date"))
    }

    /// The page is `report.mustache`'s three parts in order: the head up to the findings table,
    /// one row per finding, the foot; each row is the same markup whatever the finding.
    @Test func isTheTemplatesHeadRowsAndFoot() throws {
        let html = ReportWriter.html(Self.report, findings: Self.findings)
        let head = ReportFormat.html.header(Self.report), foot = ReportFormat.html.footer(Self.report)
        let rows = Self.findings.enumerated().map { ReportFormat.html.row($1, index: $0) }
        #expect(html == head + rows.joined() + foot)
        #expect(head.hasSuffix("<tbody>\n"))
        #expect(foot.hasPrefix("</tbody></table>\n</section>\n<footer>"))
        #expect(foot.hasSuffix("</main></body></html>\n"))
        #expect(rows[1] == "<tr><td>7 <span class=\"new\">new</span></td><td>Missed delivery</td><td class=\"nowrap\">"
            + "<span class=\"sev sev-high\">High</span></td><td class=\"nowrap\">App Store</td>"
            + "<td><code>t-missed_delivery</code></td><td>u2</td>"
            + "<td>coin42</td><td class=\"nowrap\">2026-11-19</td><td class=\"num nowrap\">CN¥6.00</td>"
            + "<td>grant</td></tr>\n")
        // The unverified delivery has no purchase date nor price: the catalog's dash, an empty amount.
        #expect(rows[3].contains("<td class=\"nowrap\">—</td><td class=\"num nowrap\"></td>"))
        // Every part opens what it closes: as many <section> as </section> over the whole page.
        #expect(html.components(separatedBy: "<section").count == html.components(separatedBy: "</section>").count)
        // Every visible word came from the catalog: the template itself holds none.
        var visible = ReportPage.source.replacing(/\{\{![^}]*\}\}/, with: " ")
        visible = visible.replacing(/\{\{[^}]*\}\}/, with: " ").replacing(/<[^>]*>/, with: " ")
        #expect(visible.matches(of: /[A-Za-z\p{Han}]{2,}/).map { String($0.output) } == [])
        let keys = CatalogNode.keys(in: ReportPage.source)
        #expect(keys.count >= 20)
        for language in Language.allCases {
            for key in keys.sorted() { #expect(Catalog.of(language).strings[key] != nil, "\(language) lacks \(key)") }
        }
    }

    /// A finding's row is filled into the markup the template renders for it (``ReportPage/RowPattern``):
    /// byte for byte what the template itself writes, for hostile values, new or not, in both languages.
    @Test(arguments: Language.allCases)
    func aFilledRowIsWhatTheTemplateRenders(language: Language) {
        let reader = Reader(language: language)
        let values = [
            "<script>alert(1)</script>", "\u{600}<meta http-equiv=refresh>", "x\"\u{301} onmouseover=alert(1)",
            "evil\u{202E}gnp.exe", "a&b'c\r\nd", "\u{E000}item\u{E001}", "{{t.report.new}}", "",
        ]
        for (index, value) in values.enumerated() {
            var finding = Self.finding(.wrongAccount, user: value, product: value)
            finding.transactionID = value
            finding.isNew = index % 2 == 0
            finding.currency = value
            let rendered = ReportPage.render(ReportPage(reader, finding: ReportPage.Row(finding, reader)))
            #expect(rendered.hasPrefix("<tr><td>7"))
            #expect(ReportFormat.html.row(finding, index: index, reader: reader) == rendered)
        }
    }

    /// The report's stylesheet is the pages' (`Stylesheet.css`, the one file), inline and unescaped,
    /// and the severity colours come from it: the page itself names no colour.
    @Test func isStyledByThePagesStylesheet() throws {
        let html = ReportWriter.html(Self.report, findings: Self.findings)
        #expect(Stylesheet.css.contains(".chip") && Stylesheet.css.contains(".metric"))
        #expect(html.contains("<style>" + Stylesheet.css + "</style>"))
        let outsideStyle = html.replacing(/<style>[\s\S]*<\/style>/, with: "")
        #expect(!outsideStyle.contains(/#[0-9a-fA-F]{3,6}\b/))
        for attribute in ["style=", "fill=", "stroke="] { #expect(!outsideStyle.contains(attribute)) }
        // Bars, legend swatches and labels carry their severity's class.
        #expect(html.contains("<rect class=\"bar sev-high\""))
        #expect(html.contains("<rect class=\"bar sev-low\""))
        #expect(html.contains("<span class=\"swatch sev-medium\"></span>Medium"))
        #expect(html.contains("<span class=\"sev sev-medium\">Medium</span>"))
    }

    /// Each severity's colours are set once, in the stylesheet, as custom properties of its class;
    /// the labels, chips, bars and swatches read them.
    @Test func severityColoursAreDefinedOnce() throws {
        let css = Stylesheet.css
        for severity in Severity.known {
            let definitions = css
                .matches(of: /\.sev-([a-z]+)\{--sev:(#[0-9a-f]{6});--sev-bg:(#[0-9a-f]{6});--sev-ink:(#[0-9a-f]{6})\}/)
                .filter { $0.output.1 == severity.rawValue }
            #expect(definitions.count == 1, "\(severity) is defined \(definitions.count) times")
            guard let definition = definitions.first else { continue }
            let mark = String(definition.output.2)
            #expect(css.components(separatedBy: mark).count == 2, "\(mark) is set outside its definition")
        }
        #expect(css.contains(".sev{background:var(--sev-bg);color:var(--sev-ink)}"))
        #expect(css.contains("svg .bar{fill:var(--sev"))
        #expect(css.contains(".chip b{color:var(--sev"))
    }

    /// Amounts show their currency's decimals: yen whole, dinars to the fils.
    @Test func amountsHaveTheirCurrencysDecimals() {
        var yen = Self.finding(.missedDelivery, user: "u1", amount: 1_500_000)
        yen.currency = "JPY"
        var dinar = Self.finding(.duplicateDelivery, user: "u2", amount: 1_234_567)
        dinar.currency = "KWD"
        let report = RunReport(
            runID: 13, status: "completed", startedAt: Self.report.startedAt, finishedAt: Self.report.finishedAt,
            since: nil, until: Self.report.until, environment: .production, dryRun: false,
            verification: .init(), summary: RunReport.FindingSummary([yen, dinar]), changes: Differ.QueueChanges(),
            timings: [:], reportDirectory: nil)
        let html = ReportWriter.html(report, findings: [yen, dinar])
        #expect(html.contains("<td class=\"num nowrap\">¥1,500</td>"))
        #expect(html.contains("<td class=\"num\">¥1,500</td>"))
        #expect(html.contains("1,234.567</td>"))
        #expect(!html.contains("1,500.00") && !html.contains("1,234.57"))
        let markdown = ReportWriter.markdown(report, findings: [yen, dinar])
        #expect(markdown.contains("| Missed delivery | JPY | ¥1,500 |"))
        #expect(markdown.contains("1,234.567 |"))
        // The JSON and the CSV keep the milliunits.
        #expect(ReportWriter.json(report, findings: [yen, dinar]).contains("\"amount_milli\": 1500000"))
        #expect(ReportWriter.csv(report, findings: [yen]).contains(",1500000,JPY,app_store\r\n"))
    }

    @Test func anEmptyRunSaysSo() {
        var report = Self.report
        report.summary = RunReport.FindingSummary()
        let html = ReportWriter.html(report, findings: [])
        #expect(html.contains("No open findings."))
        #expect(html.contains("No priced findings."))
    }

    @Test func writeAddsReportHTMLBesideTheOthers() throws {
        let root = Scratch.root.appendingPathComponent("report-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = try ReportWriter(root: root.path).write(Self.report, findings: Self.findings)
        for name in ["report.json", "report.md", "report.html", "review.csv"] {
            #expect(FileManager.default.fileExists(atPath: directory + "/" + name), "\(name) missing")
        }
    }
}


/// `report.json` is written by hand, a finding at a time: it must stay valid JSON whatever the
/// clients' strings hold, and say what the in-memory findings say.
@Suite("report.json streaming")
struct ReportJSONTests {
    @Test(arguments: [
        "quote\"backslash\\slash/", "tab\tnewline\ncr\r", "\u{01}\u{1F}\u{7F} controls", "emoji 🧾 and é and \u{2028}",
        "'; DROP TABLE reconcile.review_items; --", String(repeating: "x", count: 10_000),
    ])
    func clientStringsRoundTrip(_ value: String) throws {
        var finding = ReportHTMLTests.finding(.wrongAccount, user: value, product: value)
        finding.transactionID = value
        finding.evidence = #"{"note": "evidence is PostgreSQL's JSON text, embedded as is", "n": [1, 2]}"#
        let text = ReportWriter.json(ReportHTMLTests.report, findings: [finding, finding])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let findings = try #require(json["findings"] as? [[String: Any]])
        #expect(findings.count == 2)
        #expect(findings[0]["user_id"] as? String == value)
        #expect(findings[0]["transaction_id"] as? String == value)
        #expect(findings[0]["product_id"] as? String == value)
        #expect((findings[1]["evidence"] as? [String: Any])?["n"] as? [Int] == [1, 2])
    }

    @Test func theHeaderHasEveryFieldOfTheContract() throws {
        let text = ReportWriter.json(ReportHTMLTests.report, findings: ReportHTMLTests.findings)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(json.keys) == ["run_id", "status", "started_at", "finished_at", "window", "environment",
                                   "verification", "counts", "value_at_risk", "notifications", "consumption",
                                   "policies", "findings"])
        #expect((json["counts"] as? [String: Int])?.count == FindingKind.allCases.count)
        #expect(text.contains(#""environment": "production","#), "the setting's own spelling")
        #expect((json["notifications"] as? [String: Int]) == ["synced": 0, "undelivered": 0])
        #expect((json["consumption"] as? [String: Int]) == ["answered": 0, "expired": 0, "refunded": 0, "declined": 0])
        #expect((json["counts"] as? [String: Int])?["missed_delivery"] == 2)
        #expect((json["window"] as? [String: Any])?["since"] is NSNull)
        let verification = try #require(json["verification"] as? [String: Any])
        #expect(verification["invalid"] as? Int == 1 && (verification["by_apple_status"] as? [String: Int])?["0"] == 9)
        #expect((json["value_at_risk"] as? [[String: Any]])?.first?["amount_milli"] as? Int == 12_000)
        #expect((json["findings"] as? [Any])?.count == 4)
    }

    @Test func anEmptyReportIsValidJSON() throws {
        var report = ReportHTMLTests.report
        report.summary = RunReport.FindingSummary()
        let json = try JSONSerialization.jsonObject(with: Data(ReportWriter.json(report, findings: []).utf8))
        #expect((json as? [String: Any])?["findings"] as? [Any] != nil)
    }
}
