import Foundation
import Postgres

/// What each finished run keeps for the trends (`reconcile.runs.trends`, migration 0036): the
/// facts of its night that nothing else keeps per night.
public struct RunTrendFacts: Sendable, Equatable, Codable {
    /// The open items' value at risk per currency at the run's end, in milliunits.
    public var valueAtRisk: [String: Int64] = [:]
    /// Google Play purchases first seen voided for want of an acknowledgement (`voidedReason` 8).
    public var voidedUnacknowledged = 0
    /// Apple's refund requests the run saw answered, refunded and declined.
    public var refundRequests = RefundRequests()

    public struct RefundRequests: Sendable, Equatable, Codable {
        public var answered = 0
        public var refunded = 0
        public var declined = 0
        public init() {}
    }

    public init() {}

    enum CodingKeys: String, CodingKey {
        case valueAtRisk = "value_at_risk", voidedUnacknowledged = "voided_unacknowledged"
        case refundRequests = "refund_requests"
    }

    /// Runs before migration 0036 kept `{}`: every field reads as its empty value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        valueAtRisk = try container.decodeIfPresent([String: Int64].self, forKey: .valueAtRisk) ?? [:]
        voidedUnacknowledged = try container.decodeIfPresent(Int.self, forKey: .voidedUnacknowledged) ?? 0
        refundRequests = try container.decodeIfPresent(RefundRequests.self, forKey: .refundRequests) ?? RefundRequests()
    }
}

extension RunReport {
    /// What the run keeps for the trends.
    public var trendFacts: RunTrendFacts {
        var facts = RunTrendFacts()
        facts.valueAtRisk = RunReport.ValueAtRisk.totals(valueAtRisk)
        facts.voidedUnacknowledged = play?.voidedUnacknowledged ?? 0
        facts.refundRequests.answered = consumption.answered
        facts.refundRequests.refunded = consumption.refunded
        facts.refundRequests.declined = consumption.declined
        return facts
    }
}

/// The trends of the last ``days`` days (SPEC section 19), day by UTC day: new findings per night by
/// kind, open items and value at risk at each night's end, the refund rate by day of purchase,
/// Play's unacknowledged voids and the refund requests' outcomes. Read in a few set-based
/// statements; a day is a value, so the whole is at most ``days`` rows a series.
public struct Trends: Sendable, Equatable {
    /// One night: its last finished run.
    public struct Night: Sendable, Equatable {
        public var runID: Int64
        public var openItems: Int
        public var newByKind: [FindingKind: Int]
        public var facts: RunTrendFacts
        public var newFindings: Int { newByKind.values.reduce(0, +) }
    }

    /// One day of purchases.
    public struct PurchaseDay: Sendable, Equatable {
        public var purchases: Int
        public var revoked: Int
        /// Revoked purchases per hundred.
        public var percentRevoked: Double { purchases == 0 ? 0 : Double(revoked) / Double(purchases) * 100 }
    }

    /// The span's days, oldest first (UTC, each a day's midnight).
    public var days: [Date]
    public var nights: [Date: Night]
    /// Nil when not read (``read(until:days:beforeRun:refundRate:on:)`` without it).
    public var purchaseDays: [Date: PurchaseDay]?

    /// The span: 90 days (SPEC section 19).
    public static let defaultDays = 90

    /// The trends of the `days` days ending with `until`'s UTC day; `beforeRun`: only runs before
    /// it (report.html draws the nights before its own run, then its own from the report).
    /// `refundRate`: also the refund rate by day of purchase, one pass over the span's purchases
    /// (the Insights page; a run's report.html leaves it out, so that a night with nothing new
    /// does not read 90 days of purchases: 600,000 rows of the bench's 5M history).
    public static func read(
        until: Date, days: Int = defaultDays, beforeRun: Int64 = .max, refundRate: Bool = true,
        on connection: Connection
    ) throws -> Trends {
        let last = utc.startOfDay(for: until)
        let first = utc.date(byAdding: .day, value: -(days - 1), to: last)!
        let end = utc.date(byAdding: .day, value: 1, to: last)!.addingTimeInterval(-0.001)
        var trends = Trends(
            days: (0..<days).map { utc.date(byAdding: .day, value: $0, to: first)! }, nights: [:], purchaseDays: nil)
        let span: SQLValues = ["since": first, "until": min(end, until), "before_run": beforeRun]
        let decoder = JSONDecoder()
        for row in try connection.query(SQL.nights, span) {
            var byKind: [FindingKind: Int] = [:]
            let kinds = try decoder.decode([String: Int].self, from: Data(try row.decode(String.self, at: 4).utf8))
            for (name, count) in kinds { if let kind = FindingKind(rawValue: name) { byKind[kind] = count } }
            trends.nights[try row.decode(Date.self, at: 0)] = Night(
                runID: try row.decode(Int64.self, at: 1), openItems: try row.decode(Int.self, at: 2), newByKind: byKind,
                facts: try decoder.decode(RunTrendFacts.self, from: Data(try row.decode(String.self, at: 3).utf8)))
        }
        guard refundRate else { return trends }
        var purchaseDays: [Date: PurchaseDay] = [:]
        for row in try connection.query(SQL.refundRate, ["since": first, "until": min(end, until)]) {
            purchaseDays[try row.decode(Date.self, at: 0)] = PurchaseDay(
                purchases: try row.decode(Int.self, at: 1), revoked: try row.decode(Int.self, at: 2))
        }
        trends.purchaseDays = purchaseDays
        return trends
    }

    /// The trends with `report`'s own night in them (report.html, whose run is not finished when it
    /// is written): its findings opened, open items and facts as the report holds them.
    public func including(_ report: RunReport, newByKind: [FindingKind: Int]) -> Trends {
        var trends = self
        let day = Self.utc.startOfDay(for: report.until)
        guard trends.days.contains(day) else { return trends }
        var night = Night(runID: report.runID, openItems: report.openFindings, newByKind: newByKind, facts: report.trendFacts)
        if let earlier = trends.nights[day] {
            // An earlier run of the same day opened findings too; the night's end is this run's.
            for (kind, count) in earlier.newByKind { night.newByKind[kind, default: 0] += count }
        }
        trends.nights[day] = night
        return trends
    }

    /// The findings run `run` opened, by kind.
    public static func openedBy(run: Int64, on connection: Connection) throws -> [FindingKind: Int] {
        var opened: [FindingKind: Int] = [:]
        for row in try connection.query(SQL.openedBy, ["run_id": run]) {
            guard let kind = FindingKind(rawValue: try row.decode(String.self, at: 0)) else { continue }
            opened[kind] = try row.decode(Int.self, at: 1)
        }
        return opened
    }

    /// Every currency with a value at risk on some night, sorted.
    public var currencies: [String] {
        Set(nights.values.flatMap { $0.facts.valueAtRisk.keys }).sorted()
    }

    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()

    enum SQL {
        static let nights: SQLFile = "trends/nights.sql"
        static let refundRate: SQLFile = "trends/refund_rate.sql"
        static let openedBy: SQLFile = "trends/opened_by_run.sql"
    }
}
