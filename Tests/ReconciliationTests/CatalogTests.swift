import Foundation
@testable import Reconciliation
import TestSupport
import Testing

/// The catalogs behind the pages and reports (SPEC section 15).
@Suite("Catalogs")
struct CatalogTests {
    static let english = Catalog.of(.english)
    static let chinese = Catalog.of(.simplifiedChinese)

    @Test func bothCatalogsHoldTheSameKeys() {
        let english = Set(Self.english.strings.keys), chinese = Set(Self.chinese.strings.keys)
        #expect(english.subtracting(chinese).sorted() == [], "missing from zh-Hans")
        #expect(chinese.subtracting(english).sorted() == [], "missing from en")
        #expect(english.count > 200)
    }

    @Test func everyTextKeepsItsPlaceholdersAndIsNotEmpty() {
        func placeholders(_ text: String) -> Set<String> { Set(text.matches(of: /\{[a-zA-Z]+\}/).map { String($0.output) }) }
        for (key, english) in Self.english.strings {
            let chinese = Self.chinese[key]
            #expect(!english.isEmpty && !chinese.isEmpty, "\(key) is empty")
            #expect(placeholders(english) == placeholders(chinese), "\(key): the placeholders differ")
        }
    }

    @Test func everyValueOfTheDomainHasALabel() {
        for catalog in [Self.english, Self.chinese] {
            var keys = FindingKind.allCases.flatMap {
                ["kind.\($0.rawValue).name", "kind.\($0.rawValue).explanation", "kind.\($0.rawValue).verdict"]
            }
            keys += ReviewStatus.allCases.map { "status.\($0.rawValue)" }
            keys += Resolution.allCases.flatMap { ["resolution.\($0.rawValue)", "resolution_option.\($0.rawValue)"] }
            keys += OutboxAction.allCases.map { "outbox.\($0.rawValue)" }
            keys += Set(FindingKind.allCases.map(\.suggestedAction)).map { "action.\($0)" }
            keys += Set(FindingKind.allCases.map(\.severity)).map { "severity.\($0)" }
            keys += ["running", "completed", "completed_with_unresolved", "failed", "interrupted"].map { "run_status.\($0)" }
            keys += Settings.Environment.allCases.map { "environment.\($0.rawValue)" }
            keys += Store.allCases.map { "store.\($0.rawValue)" }
            // The sources of a desk lookup (SPEC section 13) and the offline receipt check.
            keys += ["verify_receipt", "local_receipt", "jws", "server_api", "notification", "order_lookup"]
                .map { "apple_value.source.\($0)" }
            for key in keys { #expect(catalog.strings[key] != nil, "\(catalog.language.rawValue) lacks \(key)") }
        }
    }

    @Test func theChineseNamesAreTheOnesSupportUses() {
        #expect(Self.chinese.kind(.missedDelivery).contains("漏单"))
        #expect(Self.chinese.kind(.duplicateDelivery) == "重复发货")
        #expect(Self.chinese.kind(.refundedDelivery) == "退款未回收")
    }

    @Test(arguments: [
        ("zh", Language.simplifiedChinese), ("zh-CN", .simplifiedChinese), ("zh_Hans", .simplifiedChinese),
        ("zh-SG", .simplifiedChinese), ("zh-Hant", nil), ("zh-TW", nil), ("en-GB", .english), ("fr", nil),
    ] as [(String, Language?)])
    func languageTags(tag: String, expected: Language?) {
        #expect(Language(tag: tag) == expected)
    }

    @Test func datesAndMoneyFollowTheReader() {
        let date = Date(timeIntervalSince1970: 1_795_300_000)  // 2026-11-21T22:26:40Z
        let shanghai = Reader(language: .simplifiedChinese)
        #expect(shanghai.minute(date) == "2026-11-22 06:26 UTC+8")
        #expect(shanghai.day(date) == "2026-11-22")
        #expect(Reader.standard.minute(date) == "2026-11-21 22:26 UTC")
        #expect(Reader(language: .english, timeZone: TimeZone(identifier: "Asia/Kolkata")).minute(date)
            == "2026-11-22 03:56 UTC+5:30")
        // Summer time counts at the date shown, not today.
        #expect(Reader(language: .english, timeZone: TimeZone(identifier: "Europe/London"))
            .minute(Date(timeIntervalSince1970: 1_783_000_000)) == "2026-07-02 14:46 UTC+1")
        #expect(shanghai.money(milli: 68_000, currency: "CNY") == "¥68.00")
        #expect(Reader.standard.money(milli: 6_990, currency: "USD") == "$6.99")
        #expect(Reader.standard.money(milli: 1_500_000, currency: "JPY") == "¥1,500")
        // Not a currency code (the products table is the app's): shown as it is, with two decimals.
        #expect(shanghai.money(milli: 1_500, currency: "gems!") == "1.50 gems!")
    }

    @Test func settingsReadTheReportLanguageAndTimeZone() throws {
        let base = ["RECONCILE_BUNDLE_IDS": "com.example.game"]
        let plain = try Settings(lookup: { base[$0] })
        #expect(plain.language == .english && plain.timeZone.secondsFromGMT() == 0)
        let chinese = try Settings(lookup: {
            (base.merging(["RECONCILE_LANGUAGE": "zh-Hans", "RECONCILE_TIME_ZONE": "Asia/Shanghai"]) { $1 })[$0]
        })
        #expect(chinese.reportReader.language == .simplifiedChinese)
        #expect(chinese.reportReader.timeZone.identifier == "Asia/Shanghai")
        #expect(throws: SettingsError.self) {
            try Settings(lookup: { (base.merging(["RECONCILE_LANGUAGE": "klingon"]) { $1 })[$0] })
        }
        #expect(throws: SettingsError.self) {
            try Settings(lookup: { (base.merging(["RECONCILE_TIME_ZONE": "Mars/Olympus"]) { $1 })[$0] })
        }
    }
}

/// `report.md` and `report.html` for a reader of Simplified Chinese in Beijing time.
@Suite("Reports in Chinese")
struct ChineseReportTests {
    static let reader = Reader(language: .simplifiedChinese, timeZone: TimeZone(identifier: "Asia/Shanghai"))

    /// Every English label of the report, from the English catalog: none may be left.
    static var englishLabels: [String] {
        Catalog.of(.english).strings.filter { key, text in
            (key.hasPrefix("report.") || key.hasPrefix("kind.") || key.hasPrefix("severity.") || key.hasPrefix("action."))
                && text != Catalog.of(.simplifiedChinese)[key] && text.count > 3 && !text.contains("{")
                // The stores' names are brands, the same in both languages ("Store" is in "App Store").
                && !Store.allCases.contains { Catalog.of(.simplifiedChinese).store($0).contains(text) }
        }.map(\.value)
    }

    /// The page without its inline stylesheet, which is code (`tr.revoked`), not text.
    static func withoutStylesheet(_ html: String) -> String {
        html.replacing(/<style>[\s\S]*<\/style>/, with: "")
    }

    @Test func theHTMLReportIsChineseWithYuanAndBeijingTime() {
        let html = ReportWriter.html(ReportHTMLTests.report, findings: ReportHTMLTests.findings, reader: Self.reader)
        #expect(html.contains("<html lang=\"zh-Hans\">"))
        #expect(html.contains("<title>第 12 批对账报告</title>"))
        #expect(html.contains("<h2>各类问题数量</h2><svg"))
        #expect(html.contains("<title>漏单（已付款未到账）: 2</title>"))
        #expect(html.contains("¥18.00"))
        #expect(html.contains("CNY 涉及金额"))
        #expect(html.contains("<span class=\"sev sev-high\">高</span>"))
        #expect(html.contains("<style>" + Stylesheet.css + "</style>"))
        #expect(html.contains("时间均为 UTC+8"))
        // 1_795_300_000 is 22:26 UTC, 06:26 the next day in Beijing.
        #expect(html.contains("开始于 2026-11-22 06:26 UTC+8"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !html.contains("<script"))
        let text = Self.withoutStylesheet(html)
        for label in Self.englishLabels { #expect(!text.contains(label), "English left in report.html: \(label)") }
    }

    @Test func theMarkdownReportIsChinese() {
        let markdown = ReportWriter.markdown(ReportHTMLTests.report, findings: ReportHTMLTests.findings, reader: Self.reader)
        #expect(markdown.hasPrefix("# 第 12 批对账报告\n"))
        #expect(markdown.contains("- 状态：**已完成**"))
        #expect(markdown.contains("| 漏单（已付款未到账） | 高 | 2 |"))
        #expect(markdown.contains("| 漏单（已付款未到账） | CNY | ¥12.00 |"))
        #expect(markdown.contains("| 7 | 新 | 重复发货 | 中 |"))
        for label in Self.englishLabels { #expect(!markdown.contains(label), "English left in report.md: \(label)") }
    }

    @Test func refundActivityHasItsSectionInBothLanguagesOnlyWhenThereIsSome() {
        var report = ReportHTMLTests.report
        report.notifications.synced = 5
        report.notifications.undelivered = 2
        report.consumption.answered = 3
        report.consumption.expired = 1
        report.consumption.declined = 1
        let chinese = [ReportWriter.markdown(report, findings: ReportHTMLTests.findings, reader: Self.reader),
                       ReportWriter.html(report, findings: ReportHTMLTests.findings, reader: Self.reader)]
        for text in chinese {
            #expect(text.contains("通知与退款申请"))
            #expect(text.contains("自上一批以来补拉 5 条，其中 2 条没有送达我们的通知接口"))
            #expect(text.contains("已向苹果回复 3 条，超时未回复 1 条；苹果最终同意退款 0 条，拒绝 1 条"))
            #expect(text.contains("有 2 条通知没有送达我们的通知接口"))
            let shown = Self.withoutStylesheet(text)
            for label in Self.englishLabels { #expect(!shown.contains(label), "English left: \(label)") }
        }
        let english = ReportWriter.markdown(
            report, findings: ReportHTMLTests.findings, reader: Reader(language: .english, timeZone: .gmt))
        #expect(english.contains("## Notifications and refund requests"))
        #expect(english.contains("- Refund requests: 3 answered, 1 expired unanswered; Apple refunded 0 and declined 1"))
        let quiet = ReportWriter.markdown(ReportHTMLTests.report, findings: ReportHTMLTests.findings, reader: Self.reader)
        #expect(!quiet.contains("通知与退款申请"))
    }

    @Test func theJSONReportStaysEnglish() throws {
        let json = ReportWriter.json(ReportHTMLTests.report, findings: ReportHTMLTests.findings)
        #expect(json.contains("\"kind\": \"missed_delivery\""))
        #expect(!json.contains("漏单"))
    }

    @Test func theWriterWritesForItsReader() throws {
        let root = Scratch.root.appendingPathComponent("report-zh-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = try ReportWriter(root: root.path, reader: Self.reader)
            .write(ReportHTMLTests.report, findings: ReportHTMLTests.findings)
        let html = try String(contentsOfFile: directory + "/report.html", encoding: .utf8)
        let json = try String(contentsOfFile: directory + "/report.json", encoding: .utf8)
        #expect(html.contains("第 12 批对账报告"))
        #expect(json.contains("\"status\": \"completed\""))
    }
}
