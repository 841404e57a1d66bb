import Foundation
@testable import Reconciliation
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

    static let report = RunReport(
        runID: 12, status: "completed", startedAt: Date(timeIntervalSince1970: 1_795_300_000),
        finishedAt: Date(timeIntervalSince1970: 1_795_300_190), since: nil,
        until: Date(timeIntervalSince1970: 1_795_300_000), environment: "production", dryRun: false,
        verification: .init(uploads: 10, verified: 9, invalid: 1, retry: 0, byAppleStatus: ["0": 9]),
        findings: [
            finding(.missedDelivery, user: "<script>alert(1)</script>"),
            finding(.missedDelivery, user: "u2", day: 1),
            finding(.duplicateDelivery, user: "u3", product: "\"><img src=x onerror=alert(2)>", day: 3),
            finding(.unverifiedDelivery, user: "u4", amount: nil),
        ],
        changes: Differ.QueueChanges(), timings: [:], reportDirectory: nil)

    @Test func isSelfContainedAndEscapesClientValues() {
        let html = ReportWriter.html(Self.report)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        // Nothing is fetched: no external stylesheet, script, image or font.
        #expect(!html.contains("<link") && !html.contains("src=\"http") && !html.contains("url("))
    }

    @Test func hasTheSummaryChartsAndValueAtRisk() {
        let html = ReportWriter.html(Self.report)
        #expect(html.contains("Reconciliation run 12"))
        #expect(html.contains("<h2>Findings by kind</h2><svg"))
        #expect(html.contains("<h2>Findings by purchase day</h2><svg"))
        #expect(html.contains("<title>missed_delivery: 2</title>"))
        // 6.000 CNY per priced finding: three of them.
        #expect(html.contains("18.000"))
        #expect(html.contains("CNY at risk"))
        #expect(html.contains("1 findings have no purchase date"))
    }

    @Test func anEmptyRunSaysSo() {
        var report = Self.report
        report.findings = []
        let html = ReportWriter.html(report)
        #expect(html.contains("No open findings."))
        #expect(html.contains("No priced findings."))
    }

    @Test func writeAddsReportHTMLBesideTheOthers() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = try ReportWriter(root: root.path).write(Self.report)
        for name in ["report.json", "report.md", "report.html", "review.csv"] {
            #expect(FileManager.default.fileExists(atPath: directory + "/" + name), "\(name) missing")
        }
    }
}

