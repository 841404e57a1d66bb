import Foundation
import Postgres

/// Reading the queue (SPEC sections 6–8): pages, counts, items with their history and the
/// actions a decision would draft, the next item to work on, exports and runs. Deciding is
/// ``ReviewDecisions``'.
public struct ReviewQueue {
    /// Largest page.
    public static let maximumPageSize = 500
    /// Highest page number: far beyond any queue (500 million items at the largest page size),
    /// and low enough that `(page - 1) * limit` can never overflow.
    public static let maximumPage = 1_000_000
    /// The severities most urgent first: lists sort by it, an unknown severity after them.
    static let severityOrder = Severity.known.map(\.rawValue)

    let connection: Connection

    /// The queue on one connection; use it from one task at a time, like the connection.
    public init(connection: Connection) {
        self.connection = connection
    }

    /// One page of the items matching `filter`, most severe first, then oldest first.
    /// A page beyond ``maximumPage`` is `ReviewError.invalidInput`.
    public func list(_ filter: ReviewFilter, page: Int = 1, limit: Int = 50) throws -> ReviewPage {
        let limit = min(max(limit, 1), Self.maximumPageSize)
        guard page <= Self.maximumPage else {
            throw ReviewError.invalidInput("a page number is at most \(Self.maximumPage)")
        }
        let page = max(page, 1)
        let values = filter.values()
        let total = try connection.query(ReviewSQL.count, values)[0].decode(Int.self, at: 0)
        var pageValues = values
        pageValues["severity_order"] = Self.severityOrder
        pageValues["limit"] = limit
        pageValues["offset"] = (page - 1) * limit
        let rows = try connection.query(ReviewSQL.page, pageValues)
        var counts: [String: Int] = [:]
        for row in try connection.query(ReviewSQL.countsByKind, filter.values(excludingKinds: true)) {
            counts[try row["kind"]] = try row["n"]
        }
        return ReviewPage(
            items: try rows.map(ReviewItem.init(row:)), total: total, page: page, limit: limit,
            countsByKind: FindingKind.allCases.map { ($0, counts[$0.rawValue] ?? 0) })
    }

    /// An item with its evidence, history and outbox row.
    public func detail(id: Int64) throws -> ReviewItemDetail {
        guard let row = try connection.queryFirst(ReviewSQL.detail, ["id": id]) else { throw ReviewError.notFound(id: id) }
        let events = try connection.query(ReviewSQL.events, ["id": id]).map(ReviewEvent.init(row:))
        let item = try ReviewItem(row: row)
        // What a decision would do, for an item still to decide (the page shows it and sends it back).
        var proposed: [Resolution: ActionDraft] = [:]
        for resolution in Resolution.allCases where resolution.action != nil
            && item.kind.allowedResolutions.contains(resolution) && [.open, .inReview].contains(item.status)
        {
            proposed[resolution] = try? ActionDraft.drafted(for: item, resolution: resolution, on: connection)
        }
        return ReviewItemDetail(
            item: item, evidence: try row["evidence_text"], events: events, outbox: try OutboxEntry.ofItem(id, on: connection),
            consumptionAnswers: try item.transactionID.map {
                try ConsumptionAnswerRecord.find(transactionIDs: [$0], on: connection)
            } ?? [], proposedActions: proposed)
    }

    /// The item at the top of the working queue (open or in review, most severe, oldest) other
    /// than `id`: where a person goes next after deciding one.
    public func nextInQueue(after id: Int64) throws -> Int64? {
        try connection.queryFirst(ReviewSQL.nextInQueue, ["id": id, "severity_order": Self.severityOrder])?
            .decode(Int64.self, at: 0)
    }

    /// Writes the items matching `filter` as CSV, header first, streaming so any size fits.
    /// Fields go through `ReportWriter.csvField`, which defuses spreadsheet formulas. `store` (SPEC
    /// section 18) comes last, so that the columns before it keep their places.
    public func exportCSV(_ filter: ReviewFilter, write: (String) throws -> Void) throws {
        let header = [
            "id", "status", "kind", "severity", "transaction_id", "original_transaction_id", "user_id", "product_id",
            "suggested_action", "assignee", "resolution", "resolved_by", "resolved_at", "note", "created_at",
            "updated_at", "first_seen_run", "last_seen_run", "store",
        ]
        try write(header.joined(separator: ",") + "\r\n")
        var values = filter.values()
        values["severity_order"] = Self.severityOrder
        // A cursor read a batch at a time (sql/review/export_open.sql says why), to the first empty batch.
        try connection.transaction {
            try connection.execute(ReviewSQL.exportOpen, values)
            var rows = try connection.query(ReviewSQL.exportFetch)
            while !rows.isEmpty {
                for row in rows { try write(Self.csvLine(try ReviewItem(row: row))) }
                rows = try connection.query(ReviewSQL.exportFetch)
            }
        }
    }

    static func csvLine(_ item: ReviewItem) -> String {
        let fields: [String] = [
            String(item.id), item.status.rawValue, item.kind.rawValue, item.severity.rawValue, item.transactionID ?? "",
            item.originalTransactionID ?? "", item.userID ?? "", item.productID ?? "", item.suggestedAction.rawValue,
            item.assignee ?? "", item.resolution?.rawValue ?? "", item.resolvedBy ?? "",
            item.resolvedAt.map(TimeExpression.format) ?? "", item.note ?? "", TimeExpression.format(item.createdAt),
            TimeExpression.format(item.updatedAt), String(item.firstSeenRun), String(item.lastSeenRun),
            item.store.rawValue,
        ]
        return fields.map(ReportWriter.csvField).joined(separator: ",") + "\r\n"
    }

    /// The latest nightly and ad-hoc runs, newest first; the desk's lookups, recorded as runs of
    /// kind `lookup` (migration 0008), are not among them.
    public func runs(limit: Int = 50) throws -> [RunSummary] {
        try connection.query(ReviewSQL.runs, ["limit": min(max(limit, 1), 1000)]).map(RunSummary.init(row:))
    }

    /// One run.
    public func run(id: Int64) throws -> RunSummary? {
        try connection.queryFirst(ReviewSQL.run, ["id": id]).map(RunSummary.init(row:))
    }
}
