import Foundation
import Postgres

/// The judged purchases of a span broken down by dimension, with each segment's findings, leak
/// rate and value at risk (SPEC section 19), as `reconcile insights` prints them.
public struct Insights: Sendable, Equatable {
    /// What the span covered.
    public struct Span: Sendable, Equatable {
        public var since: Date?
        public var until: Date
        public var store: Store?
        /// The last finished nightly run, whose judgement the findings are; nil when none finished
        /// (then no purchase was judged).
        public var runID: Int64?
        /// Purchases after this instant (the run's start less the grace period) were not judged yet.
        public var judgedBefore: Date?
    }

    /// One value of a dimension and what its purchases found.
    public struct Segment: Sendable, Equatable {
        public var value: String
        public var leakRate: LeakRate
        /// Flagged against the span's overall rate (``LeakRate/isFlagged(overall:)``).
        public var flagged: Bool
        /// Findings per kind (kinds without findings absent).
        public var counts: [FindingKind: Int]
        /// The findings' value per kind and currency, computed as the run's report does (items of
        /// unknown value left out).
        public var valueAtRisk: [RunReport.ValueAtRisk]

        public var purchases: Int { leakRate.purchases }
        public var leaks: Int { leakRate.leaks }
    }

    /// One dimension's segments: flagged first, then by leaks, then by the lower bound (higher
    /// first), then by value.
    public struct Table: Sendable, Equatable {
        public var dimension: InsightDimension
        public var segments: [Segment]
    }

    public var span: Span
    /// Every judged purchase of the span.
    public var overall: LeakRate
    /// One table per dimension asked, in the order asked.
    public var tables: [Table]

    /// The order of a table's rows: flagged first, then more leaks, then a higher lower bound, then
    /// the value's text (so that equal segments always come out in one order).
    static func precedes(_ a: Segment, _ b: Segment) -> Bool {
        if a.flagged != b.flagged { return a.flagged }
        if a.leaks != b.leaks { return a.leaks > b.leaks }
        if a.leakRate.lowerBound != b.leakRate.lowerBound { return a.leakRate.lowerBound > b.leakRate.lowerBound }
        return a.value < b.value
    }
}

extension Insights {
    /// The review items counted for one segment's purchases (the queue's segment filter, the
    /// Insights page's links): the same purchases and statuses as the segment's counts.
    public static func items(
        of dimension: InsightDimension, value: String, _ query: InsightsQuery, settings: Settings,
        on connection: Connection
    ) throws -> [Int64] {
        try connection.transaction {
            try connection.execute(SQL.snapshot)
            guard let row = try connection.queryFirst(SQL.judgedBefore, ["grace_seconds": settings.grace]) else {
                return []
            }
            let values = segmentValues(
                query, dimension: dimension, value: value, judgedBefore: try row.decode(Date.self, "judged_before"),
                settings: settings)
            var ids: [Int64] = []
            try connection.stream(SQL.segments, values, relations: ["uploads": settings.uploadsRelation]) { row in
                if let id = try row.decode(Int64?.self, "item_id") { ids.append(id) }
            }
            return ids
        }
    }

    /// What `sql/insights/segments.sql` is bound with for one dimension: its counts (`value` nil)
    /// or one segment's items.
    static func segmentValues(
        _ query: InsightsQuery, dimension: InsightDimension, value: String?, judgedBefore: Date, settings: Settings
    ) -> SQLValues {
        [
            "since": query.since, "until": query.until, "judged_before": judgedBefore,
            "accepted_apps": Differ.Parameters.acceptedApps(
                bundleIDs: settings.bundleIDs, packageNames: settings.googlePlay.packageNames),
            "store": query.store?.rawValue, "dimension": dimension.rawValue, "statuses": InsightsQuery.countedStatuses,
            "leak_kinds": FindingKind.allCases.filter(\.isLeak).map(\.rawValue), "value": value,
        ]
    }

    /// Computes the insights of `query` in PostgreSQL: judged purchases are those the settings'
    /// run judges (their accepted apps, its grace period), findings are the queue's items of
    /// those purchases (``InsightsQuery/counts(_:)``). One statement per dimension; one row per
    /// segment and per kind and currency of its findings comes back, streamed: nothing per
    /// purchase reaches the process.
    public static func compute(
        _ query: InsightsQuery, settings: Settings, on connection: Connection
    ) throws -> Insights {
        try connection.transaction {
            try connection.execute(SQL.snapshot)
            return try computeInSnapshot(query, settings: settings, on: connection)
        }
    }

    private static func computeInSnapshot(
        _ query: InsightsQuery, settings: Settings, on connection: Connection
    ) throws -> Insights {
        var span = Span(since: query.since, until: query.until, store: query.store)
        if let row = try connection.queryFirst(SQL.judgedBefore, ["grace_seconds": settings.grace]) {
            span.runID = try row.decode(Int64.self, "run_id")
            span.judgedBefore = try row.decode(Date.self, "judged_before")
        }
        var segments: [InsightDimension: [String: Segment]] = [:]
        if let judgedBefore = span.judgedBefore {
            // One statement per dimension: each is one pass grouped by its key alone (the
            // planner folds the others away), which is what a single --by costs.
            for dimension in query.dimensions {
                let values = segmentValues(
                    query, dimension: dimension, value: nil, judgedBefore: judgedBefore, settings: settings)
                var table: [String: Segment] = [:]
                try connection.stream(SQL.segments, values, relations: ["uploads": settings.uploadsRelation]) { row in
                    let value = try row.decode(String.self, "value")
                    if try row.decode(Bool.self, "is_segment") {
                        table[value] = Segment(
                            value: value,
                            leakRate: LeakRate(
                                purchases: try row.decode(Int.self, "purchases"),
                                leaks: try row.decode(Int.self, "leaks")),
                            flagged: false, counts: [:], valueAtRisk: [])
                        return
                    }
                    // A kind this build does not know (a newer job's) is left out, as the report does.
                    guard let kind = FindingKind(rawValue: try row.decode(String.self, "kind")) else { return }
                    table[value]?.counts[kind, default: 0] += try row.decode(Int.self, "items")
                    if let currency = try row.decode(String?.self, "currency"),
                        let amount = try row.decode(Int64?.self, "amount_milli")
                    {
                        table[value]?.valueAtRisk.append(
                            RunReport.ValueAtRisk(kind: kind, currency: currency, amountMilli: amount))
                    }
                }
                segments[dimension] = table
            }
        }
        // Every dimension sorts every judged purchase into exactly one segment: any one of them
        // sums to the span's purchases and leaks.
        let first = query.dimensions.first.flatMap { segments[$0] }?.values
        let overall = LeakRate(
            purchases: first?.reduce(0) { $0 + $1.purchases } ?? 0, leaks: first?.reduce(0) { $0 + $1.leaks } ?? 0)
        let tables = query.dimensions.map { dimension in
            Table(
                dimension: dimension,
                segments: (segments[dimension] ?? [:]).values.map { segment in
                    var segment = segment
                    segment.flagged = segment.leakRate.isFlagged(overall: overall)
                    segment.valueAtRisk.sort()
                    return segment
                }.sorted(by: precedes))
        }
        return Insights(span: span, overall: overall, tables: tables)
    }

    enum SQL {
        static let snapshot: SQLFile = "insights/snapshot.sql"
        static let judgedBefore: SQLFile = "insights/judged_before.sql"
        static let segments: SQLFile = "insights/segments.sql"
    }
}
