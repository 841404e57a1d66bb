import Foundation
import Hummingbird
import Reconciliation

/// The queue: the filtered list with counts by kind, and its CSV export.
struct QueueController: Sendable {
    let database: ReviewDatabase
    let sessions: SessionStore
    let pages: Pages
    let configuration: ReviewWebConfiguration

    func routes() -> RouteCollection<SignedInContext> {
        let routes = RouteCollection(context: SignedInContext.self)
        routes.get("/") { request, context in try await queue(request, context: context) }
        routes.get("/export.csv") { request, context in try await export(request, context: context) }
        return routes
    }

    private func queue(_ request: Request, context: SignedInContext) async throws -> Response {
        let session = context.session
        let reader = context.reader
        let t = reader.catalog
        let query = QueryFilter(query: request.uri.query)
        let filter = try await resolved(query)
        guard let page = query.page else {
            throw HTTPError(.badRequest, message: t.text("error.page_too_large", ["max": String(ReviewQueue.maximumPage)]))
        }
        let result = try await database.read { try $0.list(filter, page: page, limit: 50) }
        let flash = await sessions.takeFlash(for: session.id)
        let selectedKind = filter.kinds.first?.rawValue
        let statusOptions = QueryFilter.statusChoices.map {
            OptionView(value: $0.value, label: t["status_filter.\($0.value)"], selected: $0.value == query.statusChoice)
        }
        let kindOptions = FindingKind.allCases.map {
            OptionView(value: $0.rawValue, label: t.kind($0), selected: $0.rawValue == selectedKind)
        }
        let severityOptions = Severity.known.map {
            OptionView(value: $0.rawValue, label: t.severity($0), selected: filter.severities.first == $0)
        }
        let storeOptions = Store.allCases.map {
            OptionView(value: $0.rawValue, label: t.store($0), selected: filter.store == $0)
        }
        let kindCounts = result.countsByKind.map { entry -> QueuePage.KindCount in
            let href = "/?" + query.encoded(replacing: ["kind": entry.kind.rawValue, "page": nil])
            return QueuePage.KindCount(
                label: t.kind(entry.kind), severity: entry.kind.severity.rawValue, count: entry.count,
                zero: entry.count == 0, active: entry.kind.rawValue == selectedKind, href: href)
        }
        let rows = result.items.map { item -> QueuePage.Row in
            QueuePage.Row(
                id: item.id, href: "/items/\(item.id)", severity: item.severity.rawValue, severityLabel: t.severity(item.severity),
                kindLabel: t.kind(item.kind), status: item.status.rawValue, statusLabel: t.status(item.status),
                store: item.store.rawValue, storeLabel: t.store(item.store), transaction: item.transactionID ?? "—",
                user: item.userID ?? "—", product: item.productID ?? "—",
                assignee: item.assignee ?? "", detected: reader.minute(item.createdAt),
                value: item.value.map { reader.money(milli: $0.milli, currency: $0.currency) } ?? "—")
        }
        let filterView = QueuePage.FilterView(
            user: filter.userID ?? "", product: filter.productID ?? "", transaction: filter.transactionID ?? "",
            since: query.value("since") ?? "", until: query.value("until") ?? "")
        let previous: String? = result.page > 1 ? "/?" + query.encoded(replacing: ["page": String(result.page - 1)]) : nil
        let next: String? =
            result.page < result.pageCount ? "/?" + query.encoded(replacing: ["page": String(result.page + 1)]) : nil
        var view = QueuePage(
            filter: filterView, statusOptions: statusOptions, kindOptions: kindOptions,
            severityOptions: severityOptions, storeOptions: storeOptions, allKinds: filter.kinds.isEmpty,
            allKindsHref: "/?" + query.encoded(replacing: ["kind": nil, "page": nil]), kindCounts: kindCounts,
            items: rows, hasItems: !rows.isEmpty, totalText: t.text("queue.count", ["count": String(result.total)]),
            pageText: t.text("queue.page", ["page": String(result.page), "pages": String(result.pageCount)]),
            prevHref: previous, nextHref: next, exportHref: "/export.csv?" + query.encoded(replacing: ["page": nil]),
            bulk: .init(
                hidden: QueryFilter.keys.filter { $0 != "page" }.compactMap { key in
                    query.value(key).map { QueuePage.Bulk.Field(name: key, value: $0) }
                },
                selectAllText: t.text("queue.select_all", ["count": String(result.total)])))
        view.segmentText = query.segment.map { segment in
            t.text("queue.segment", [
                "segment": t["insights.dimension.\(segment.dimension.rawValue)"] + ": "
                    + InsightsPage.Segments.label(segment.dimension, segment.value, t),
            ])
        }
        view.clearSegmentHref = "/?" + query.encoded(replacing: ["segment": nil, "page": nil])
        return pages.render(
            "queue", view, title: t["queue.title"], context: context, flash: flash.map { FlashView($0) }, tab: .queue)
    }

    private func resolved(_ query: QueryFilter) async throws -> ReviewFilter {
        try await database.filter(query, settings: configuration.deskSettings)
    }

    /// The CSV is for spreadsheets and scripts: its columns and values stay as the CLI writes them.
    /// It is streamed as the database yields rows (chunked, no Content-Length), so memory stays
    /// bounded whatever the queue's size. One of the page connections is held while it streams
    /// (one of the exports' share of them: paused downloads leave the rest to the pages), and
    /// freed when the last row is sent, when the client goes away, when it takes nothing for
    /// the stall timeout, or at the export's time limit; the last three abort the response (no
    /// last chunk) and are logged. The rows come from a cursor a batch at a time, so the pages'
    /// `statement_timeout` bounds each batch, not the whole download. The response starts
    /// only once the first chunk (or the whole of a small export) is written: no free connection
    /// or a failed query is still an error page, not a truncated file.
    private func export(_ request: Request, context: SignedInContext) async throws -> Response {
        let filter = try await resolved(QueryFilter(query: request.uri.query))
        let stream = ExportStream(
            stallTimeout: .milliseconds(Int64(configuration.exportStallTimeout * 1000)),
            timeLimit: .milliseconds(Int64(configuration.exportTimeLimit * 1000)))
        let chunks = ExportChunks(stream)
        let database = self.database
        let logger = context.logger
        Task {
            do {
                let failure = try await database.runExport { queue in
                    stream.produce { write in try queue.exportCSV(filter, write: write) }.map { "\($0)" }
                }
                // The client sees a chunked body that never ends (no last chunk): an aborted
                // download, never a file that looks complete.
                if let failure {
                    logger.notice("CSV export aborted", metadata: ["error": "\(failure)"])
                }
            } catch {
                stream.fail(error)
            }
        }
        let first = try await chunks.next()
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"review-items.csv\"",
                .cacheControl: "no-store",
            ],
            body: ResponseBody { writer in
                if let first { try await writer.write(first) }
                while let chunk = try await chunks.next() { try await writer.write(chunk) }
                try await writer.finish(nil)
            })
    }
}

extension ReviewDatabase {
    /// The query's filter with its segment (the Insights page's link) resolved to the segment's
    /// items over the Insights page's span; a segment without the job's settings matches nothing.
    func filter(_ query: QueryFilter, settings: Settings?) async throws -> ReviewFilter {
        guard let segment = query.segment, let settings else { return query.filter }
        let until = Date()
        let span = InsightsQuery(since: until.addingTimeInterval(-Double(Trends.defaultDays) * 86_400), until: until)
        let items = try await lender.run {
            try Insights.items(of: segment.dimension, value: segment.value, span, settings: settings, on: $0)
        }
        return query.filter(segmentItems: items)
    }
}
