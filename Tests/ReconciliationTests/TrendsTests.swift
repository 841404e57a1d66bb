import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// The trends of SPEC section 19 (issue 39 item 2): what each run keeps, read back night by night,
/// and drawn as charts with their numbers.
@Suite("Trends: night by night, drawn")
struct TrendsTests {
    static let day: TimeInterval = 86_400

    /// A world of six uploads (three never credited, one forged and uncredited) judged by a real run, beside an older
    /// night planted as a run of three days ago kept it.
    struct World {
        let connection: Connection
        let report: RunReport
        let older: Int64

        init(_ name: String) async throws {
            let (database, connection) = try TestDatabase.migrated(name)
            self.connection = connection
            try ScriptedVerifier.upload(["tx-1", "tx-2", "tx-3", "tx-4", "tx-5", "forged-6"], on: connection)
            for id in ["tx-1", "tx-2"] { try connection.plantDelivery(id, to: id == "tx-1" ? "user-0" : "user-1", product: "coin42", age: "1 day") }
            older = try connection.query(
                """
                INSERT INTO reconcile.runs (window_until, environment, status, finished_at, findings_total, trends)
                VALUES (now() - interval '3 days', 'production', 'completed', now() - interval '3 days', 7,
                        '{"value_at_risk": {"CNY": 42000}, "voided_unacknowledged": 2,
                          "refund_requests": {"answered": 3, "refunded": 1, "declined": 2}}')
                RETURNING id
                """)[0].decode(Int64.self, at: 0)
            // A dry run that day is no night.
            try connection.execute(
                """
                INSERT INTO reconcile.runs (window_until, environment, status, finished_at, findings_total, dry_run)
                VALUES (now() - interval '3 days' + interval '1 second', 'production', 'completed', now(), 99, true)
                """)
            let settings = try Settings(lookup: [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_REPORT_DIR": Scratch.folder("trends").path,
            ].lookup)
            report = try await ReconciliationJob(settings: settings, verifier: ScriptedVerifier(), logger: Logger(label: "t"))
                .run(.init(since: Date().addingTimeInterval(-7 * TrendsTests.day)))
        }
    }

    static func utcDay(_ date: Date) -> Date { Trends.utc.startOfDay(for: date) }

    @Test func eachNightIsItsLastRunWithWhatItKeptAndOpened() async throws {
        let world = try await World("trends_nights")
        let report = world.report
        #expect(report.newFindings == 3)
        // The run kept its value at risk: three missed coin42 at ¥6.
        let kept = try world.connection.query("SELECT trends::text FROM reconcile.runs WHERE id = $1", [report.runID])[0]
            .decode(String.self, at: 0)
        let facts = try JSONDecoder().decode(RunTrendFacts.self, from: Data(kept.utf8))
        #expect(facts == report.trendFacts)
        #expect(facts.valueAtRisk == Dictionary(grouping: report.valueAtRisk, by: \.currency).mapValues {
            $0.map(\.amountMilli).reduce(0, +)
        })

        // One bought purchase refunded: the refund rate of the purchase day.
        try world.connection.execute(
            "UPDATE reconcile.apple_transactions SET revocation_date = now() WHERE transaction_id = 'tx-3'")
        let trends = try Trends.read(until: Date(), on: world.connection)
        #expect(trends.days.count == Trends.defaultDays)
        #expect(trends.days.last == Self.utcDay(Date()))
        #expect(Set(trends.nights.keys) == [Self.utcDay(Date().addingTimeInterval(-3 * Self.day)), Self.utcDay(report.until)])
        let older = try #require(trends.nights[Self.utcDay(Date().addingTimeInterval(-3 * Self.day))])
        #expect(older.runID == world.older && older.openItems == 7 && older.newFindings == 0)
        #expect(older.facts.valueAtRisk == ["CNY": 42_000] && older.facts.refundRequests.declined == 2)
        let tonight = try #require(trends.nights[Self.utcDay(report.until)])
        #expect(tonight.runID == report.runID && tonight.openItems == report.openFindings)
        #expect(tonight.newFindings == report.newFindings)
        let bought = try #require(trends.purchaseDays?[Self.utcDay(Date().addingTimeInterval(-Self.day))])
        #expect(bought.purchases == 5 && bought.revoked == 1)
        #expect(trends.currencies == ["CNY"])

        // report.html's view: the nights before its run, then its own from the report.
        let before = try Trends.read(until: report.until, beforeRun: report.runID, on: world.connection)
        #expect(before.nights[Self.utcDay(report.until)] == nil)
        // A run's report reads no purchases: the refund rate is the Insights page's.
        let nightly = try Trends.read(until: report.until, beforeRun: report.runID, refundRate: false, on: world.connection)
        #expect(nightly.purchaseDays == nil && nightly.nights == before.nights)
        #expect(!TrendCharts.charts(nightly, reader: Reader(language: .english)).contains { $0.id == "trend-refund-rate" })
        let including = before.including(report, newByKind: tonight.newByKind)
        #expect(including.nights[Self.utcDay(report.until)]?.openItems == report.openFindings)
        #expect(including.nights[Self.utcDay(report.until)]?.newFindings == report.newFindings)
    }

    @Test func theChartsDrawTheNumbersInBothLanguages() async throws {
        let world = try await World("trends_charts")
        let trends = try Trends.read(until: Date(), on: world.connection)
        for language in Language.allCases {
            let reader = Reader(language: language, timeZone: .gmt)
            let charts = TrendCharts.charts(trends, reader: reader, prefix: "t")
            #expect(charts.map(\.id) == ["t-new", "t-open", "t-risk-cny", "t-refund-rate", "t-play-voids", "t-refund-requests"])
            for chart in charts {
                #expect(chart.svg.hasPrefix("<svg ") && chart.svg.hasSuffix("</svg>"))
                #expect(chart.svg.contains(#"role="img""#) && chart.svg.contains(#"aria-describedby="\#(chart.id)-table""#))
                #expect(chart.svg.contains("<title id=\"\(chart.id)-title\">\(HTMLText.escape(chart.title))</title>"))
                // One ink: no colour but the ink, the paper and the grid.
                let colours = Set(chart.svg.matches(of: /#[0-9a-fA-F]{3,6}\b/).map { String($0.output) })
                #expect(colours.isSubset(of: ["#222", "#fff", "#999"]), "\(colours)")
                #expect(!chart.title.isEmpty && !chart.title.hasPrefix("trends."))
            }
            let open = try #require(charts.first { $0.id == "t-open" })
            #expect(open.rows == [
                [reader.day(Self.utcDay(Date().addingTimeInterval(-3 * Self.day))), reader.number(7)],
                [reader.day(Self.utcDay(world.report.until)), reader.number(world.report.openFindings)],
            ])
            let new = try #require(charts.first { $0.id == "t-new" })
            #expect(new.headers.contains(reader.catalog.kind(.missedDelivery)))
            // Several series: a legend, each pattern drawn.
            #expect(new.svg.contains("url(#t-new-hatch)") && new.svg.contains(reader.catalog.severity(.high)))
            let requests = try #require(charts.first { $0.id == "t-refund-requests" })
            #expect(requests.rows.first == [reader.day(Self.utcDay(Date().addingTimeInterval(-3 * Self.day))), "3", "1", "2"])
        }
        #expect(TrendCharts.niceCeiling(0) == 1 && TrendCharts.niceCeiling(7) == 10 && TrendCharts.niceCeiling(42_000) == 50_000)
        #expect(TrendCharts.niceCeiling(150) == 200 && TrendCharts.niceCeiling(1) == 1)
    }
}
