import Foundation
import Hummingbird
import Reconciliation

/// The Insights page (SPEC section 19): why orders leak. The trends of the last 90 days as
/// server-drawn charts, each with its numbers as a table.
struct InsightsController: Sendable {
    let database: ReviewDatabase
    let pages: Pages
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
        let page = InsightsPage(
            explanation: t.text("trends.explanation", ["days": String(Trends.defaultDays)]),
            charts: TrendCharts.charts(trends, reader: reader).map(InsightsPage.Chart.init),
            hasNights: !trends.nights.isEmpty)
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
}
