import Foundation
import Hummingbird
import Reconciliation

/// The Insights page (SPEC section 19): why orders leak. The trends of the last 90 days as
/// server-drawn charts, each with its numbers as a table.
struct InsightsController: Sendable {
    let database: ReviewDatabase
    let pages: Pages
    /// The job's settings (accepted apps, grace, relations) the segments are judged with; nil
    /// leaves the page with the trends only, saying why.
    let settings: Settings?
    /// Segments shown per dimension (flagged ones always).
    static let segmentsShown = 20
    /// The span's end; the clock in tests.
    var now: @Sendable () -> Date = Date.init

    func routes() -> RouteCollection<SignedInContext> {
        let routes = RouteCollection(context: SignedInContext.self)
        routes.get("/insights") { _, context in try await insightsPage(context: context) }
        return routes
    }

    private func insightsPage(context: SignedInContext) async throws -> Response {
        let reader = context.reader
        let t = reader.catalog
        let until = now()
        let trends = try await database.lender.run { try Trends.read(until: until, on: $0) }
        var page = InsightsPage(
            explanation: t.text("trends.explanation", ["days": String(Trends.defaultDays)]),
            charts: TrendCharts.charts(trends, reader: reader).map(InsightsPage.Chart.init),
            hasNights: !trends.nights.isEmpty)
        page.segmentsExplanation = t.text("insights.explanation", [
            "days": String(Trends.defaultDays), "minimum": String(LeakRate.flagMinimumLeaks),
        ])
        if let settings {
            let since = until.addingTimeInterval(-Double(Trends.defaultDays) * 86_400)
            let insights = try await database.lender.run {
                try Insights.compute(InsightsQuery(since: since, until: until), settings: settings, on: $0)
            }
            page.segments = InsightsPage.Segments(insights, reader: reader, shown: Self.segmentsShown)
        } else {
            page.segmentsNotice = t["insights.not_configured"]
        }
        return pages.render("insights", page, title: t["nav.insights"], context: context, tab: .insights)
    }
}

struct InsightsPage {
    struct Chart {
        let id: String
        let title: String
        let svg: String
        let headers: [String]
        let rows: [Row]
        struct Row { let cells: [String] }

        init(_ chart: TrendChart) {
            id = chart.id
            title = chart.title
            svg = chart.svg
            headers = chart.headers
            rows = chart.rows.map { Row(cells: $0) }
        }
    }

    let explanation: String
    let charts: [Chart]
    let hasNights: Bool
    var segmentsExplanation = ""
    /// Why there are no segments (no settings, no finished run).
    var segmentsNotice: String?
    var segments: Segments? {
        didSet { if segments?.judged == false { segmentsNotice = segments?.notice } }
    }

    /// The segments of every dimension: the flagged ones first, then a table per dimension.
    struct Segments {
        struct Row {
            let dimension: String
            let value: String
            let purchases: String
            let leaks: String
            let rate: String
            let rateLow: String
            let valueAtRisk: String
            let flagged: Bool
            let queueHref: String
        }

        struct Table {
            let id: String
            let title: String
            let rows: [Row]
            let more: String?
        }

        let judged: Bool
        let notice: String?
        let overall: String
        let flagged: [Row]
        let hasFlagged: Bool
        let tables: [Table]

        init(_ insights: Insights, reader: Reader, shown: Int) {
            let t = reader.catalog
            judged = insights.span.judgedBefore != nil
            notice = judged ? nil : t["insights.no_run"]
            func percent(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
            overall = t.text("insights.overall", [
                "leaks": reader.number(insights.overall.leaks), "purchases": reader.number(insights.overall.purchases),
                "rate": percent(insights.overall.rate),
            ])
            func row(_ dimension: InsightDimension, _ segment: Insights.Segment) -> Row {
                let risk = RunReport.ValueAtRisk.totals(segment.valueAtRisk).sorted { $0.key < $1.key }
                    .map { reader.money(milli: $0.value, currency: $0.key) }.joined(separator: ", ")
                return Row(
                    dimension: t["insights.dimension.\(dimension.rawValue)"],
                    value: Self.label(dimension, segment.value, t), purchases: reader.number(segment.purchases),
                    leaks: reader.number(segment.leaks), rate: percent(segment.leakRate.rate),
                    rateLow: percent(segment.leakRate.lowerBound), valueAtRisk: risk.isEmpty ? "—" : risk,
                    flagged: segment.flagged,
                    queueHref: "/?" + Form.encode([("status", "active"), ("segment", "\(dimension.rawValue):\(segment.value)")]))
            }
            flagged = insights.tables.flatMap { table in table.segments.filter(\.flagged).map { row(table.dimension, $0) } }
            hasFlagged = !flagged.isEmpty
            tables = insights.tables.map { table in
                let rows = table.segments.enumerated().filter { $0.offset < shown || $0.element.flagged }.map(\.element)
                let hidden = table.segments.count - rows.count
                return Table(
                    id: "segments-\(table.dimension.rawValue)", title: t["insights.dimension.\(table.dimension.rawValue)"],
                    rows: rows.map { row(table.dimension, $0) },
                    more: hidden > 0 ? t.text("insights.more", ["count": reader.number(hidden)]) : nil)
            }
        }

        /// A segment's value as the reader reads it.
        static func label(_ dimension: InsightDimension, _ value: String, _ t: Catalog) -> String {
            if value == "unknown" { return t["insights.unknown"] }
            switch dimension {
            case .uploadDelay: return t["insights.upload_delay.\(value)"]
            case .purchaseHour: return t.text("insights.hour", ["hour": value])
            case .store: return Store(rawValue: value).map(t.store) ?? value
            case .appVersion, .osVersion, .deviceModel, .product: return value
            }
        }
    }
}
