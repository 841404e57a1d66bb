import Foundation
@testable import Reconciliation
import Testing

/// What report.md, report.html, the terminal's lines and report.json say about Google Play (SPEC
/// section 18): on a run with Play on, the purchases acknowledged, and a notice exactly when its
/// condition holds (refunds unchecked, a voided-list gap, purchases Google refunded because nobody
/// acknowledged them); nothing at all on a run with Play off.
@Suite("Report: Google Play's lines")
struct PlayReportLinesTests {
    static let english = Reader(language: .english, timeZone: .gmt)
    static let chinese = Reader(language: .simplifiedChinese, timeZone: TimeZone(identifier: "Asia/Shanghai"))

    /// The texts of both languages, md and html, of a report with `play`.
    static func texts(_ play: PlayRunSummary?) -> (english: [String], chinese: [String]) {
        var report = ReportHTMLTests.report
        report.play = play
        let findings = ReportHTMLTests.findings
        return ([ReportWriter.markdown(report, findings: findings, reader: english),
                 ChineseReportTests.withoutStylesheet(ReportWriter.html(report, findings: findings, reader: english))],
                [ReportWriter.markdown(report, findings: findings, reader: chinese),
                 ChineseReportTests.withoutStylesheet(ReportWriter.html(report, findings: findings, reader: chinese))])
    }

    /// Each line's text, as the catalogs say it (`{count}` filled), per language.
    static let lines: [(key: String, english: String, chinese: String)] = [
        ("refunds_unchecked", "Play refunds unchecked", "Play 退款未核对"),
        ("voided_gap", "the 30 days Google keeps: voids in between may be lost", "超过 Google 保留的 30 天"),
        ("voided_unacknowledged", "Purchases Google refunded because nobody acknowledged them within three days: 3. The app",
         "Google 已退款 3 笔三天内无人确认"),
    ]

    @Test(arguments: [
        (false, false, 0), (true, false, 0), (false, true, 0), (false, false, 3), (true, true, 3),
    ])
    func eachNoticeAppearsExactlyWhenItsConditionHolds(unchecked: Bool, gap: Bool, unacknowledged: Int) {
        var play = PlayRunSummary()
        play.refundsUnchecked = unchecked
        play.voidedGap = gap
        play.voidedUnacknowledged = unacknowledged
        play.acknowledged = 4
        let (english, chinese) = Self.texts(play)
        let holds = ["refunds_unchecked": unchecked, "voided_gap": gap, "voided_unacknowledged": unacknowledged > 0]
        for text in english {
            #expect(text.contains("Delivered purchases the job acknowledged before Google could refund them: 4"))
            for line in Self.lines { #expect(text.contains(line.english) == holds[line.key], "\(line.key)") }
        }
        for text in chinese {
            #expect(text.contains("本批替应用确认（acknowledge）的已发货订单：4 笔"))
            for line in Self.lines { #expect(text.contains(line.chinese) == holds[line.key], "\(line.key)") }
            for label in ChineseReportTests.englishLabels { #expect(!text.contains(label), "English left: \(label)") }
        }
        #expect(english[0].contains("## Google Play\n\n- Delivered purchases the job acknowledged"))
        #expect(english[1].contains("<section class=\"card play\"><h2>Google Play</h2>"))
        let notices = english[1].components(separatedBy: "<p class=\"notice\">").count - 1
        #expect(notices == holds.values.filter { $0 }.count)
    }

    @Test func aRunWithPlayOffSaysNothingOfPlay() {
        let (english, chinese) = Self.texts(nil)
        for text in english + chinese {
            #expect(!text.contains("Google Play"))
            #expect(!text.contains("acknowledge"))
        }
        var report = ReportHTMLTests.report
        #expect(!ReportWriter.json(report, findings: []).contains("\"play\""))
        report.play = PlayRunSummary()
        report.play?.acknowledged = 2
        report.play?.voidedUnacknowledged = 1
        report.play?.voidedGap = true
        let json = ReportWriter.json(report, findings: [])
        #expect(json.contains("\"voided_gap\": true"))
        #expect(json.contains("\"acknowledged\": 2, \"voided_unacknowledged\": 1}"))
    }

    @Test func theTerminalLinesAreTheEnglishCatalogs() {
        var play = PlayRunSummary()
        play.refundsUnchecked = true
        let said = play.summaryLines(Catalog.of(.english))
        #expect(said.lines == ["Delivered purchases the job acknowledged before Google could refund them: 0"])
        #expect(said.notices.count == 1 && said.notices[0].hasPrefix("Play refunds unchecked"))
    }
}
