import Foundation
import Postgres

/// What one run found and did: the content of `report.json` (SPEC section 10).
public struct RunReport: Sendable {
    /// Upload verification counts of the run.
    public struct Verification: Sendable, Equatable {
        public var uploads = 0
        public var verified = 0
        public var invalid = 0
        public var retry = 0
        /// Apple status code → uploads.
        public var byAppleStatus: [String: Int] = [:]
    }

    /// One open finding the run detected.
    public struct Finding: Sendable, Equatable {
        /// The review item, or nil in a dry run for a finding not yet in the queue.
        public var reviewItemID: Int64?
        /// First detected by this run.
        public var isNew: Bool
        public var kind: FindingKind
        /// Which store it is about (SPEC section 18).
        public var store: Store = .appStore
        public var transactionID: String?
        public var originalTransactionID: String?
        public var userID: String?
        public var productID: String?
        /// The evidence as JSON text.
        public var evidence: String
        /// Money at stake, in milliunits of `currency`, when the price is known.
        public var amountMilli: Int64?
        public var currency: String?
        public var purchaseDate: Date?
        /// The run that last judged its item (the item's `last_seen_run`), when it has one.
        var judgedRun: Int64?
        /// Its rows as a run rendered them when it was last judged (`ReportRowCache`), when they
        /// still hold; nil renders them.
        var rendered: ReportFormat.RenderedRows?
    }

    /// What the report's summary shows about the findings; the findings themselves are streamed
    /// from PostgreSQL into the report files and never held in memory.
    public struct FindingSummary: Sendable, Equatable {
        /// Open findings the run detected, new or not.
        public var open = 0
        /// Findings first detected by this run.
        public var new = 0
        /// Findings per kind (kinds without findings absent).
        public var byKind: [FindingKind: Int] = [:]
        /// Money at stake per kind and currency, in milliunits.
        public var valueAtRisk: [ValueAtRisk] = []
        /// Findings per purchase day (days since 1970-01-01, UTC).
        public var byPurchaseDay: [Int64: Int] = [:]
        /// Findings without a purchase date (unknown to Apple, or about an upload).
        public var undated = 0

        /// No findings.
        public init() {}

        /// The summary of findings held in memory (tests and small reports).
        public init(_ findings: some Sequence<Finding>) {
            var sums: [FindingKind: [String: Int64]] = [:]
            for finding in findings {
                open += 1
                if finding.isNew { new += 1 }
                byKind[finding.kind, default: 0] += 1
                if let amount = finding.amountMilli, let currency = finding.currency {
                    sums[finding.kind, default: [:]][currency, default: 0] += amount
                }
                if let date = finding.purchaseDate {
                    byPurchaseDay[Self.day(of: date), default: 0] += 1
                } else {
                    undated += 1
                }
            }
            valueAtRisk = sums.flatMap { kind, perCurrency in
                perCurrency.map { ValueAtRisk(kind: kind, currency: $0.key, amountMilli: $0.value) }
            }.sorted()
        }

        /// The UTC day a purchase fell on, counted from 1970-01-01.
        public static func day(of date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / 86_400).rounded(.down)) }
    }

    /// Money at stake for one kind in one currency.
    public struct ValueAtRisk: Sendable, Equatable, Comparable {
        /// The entries' amounts summed per currency (milliunits).
        public static func totals(_ entries: some Sequence<Self>) -> [String: Int64] {
            entries.reduce(into: [:]) { $0[$1.currency, default: 0] += $1.amountMilli }
        }

        public var kind: FindingKind
        public var currency: String
        /// Milliunits of `currency`.
        public var amountMilli: Int64

        /// Creates an entry.
        public init(kind: FindingKind, currency: String, amountMilli: Int64) {
            self.kind = kind
            self.currency = currency
            self.amountMilli = amountMilli
        }

        /// In the order of `FindingKind.allCases`, then by currency.
        public static func < (lhs: Self, rhs: Self) -> Bool {
            let order = FindingKind.allCases
            let (left, right) = (order.firstIndex(of: lhs.kind)!, order.firstIndex(of: rhs.kind)!)
            return left != right ? left < right : lhs.currency < rhs.currency
        }
    }

    public var runID: Int64
    public var status: RunStatus
    public var startedAt: Date
    public var finishedAt: Date
    public var since: Date?
    public var until: Date
    /// `RECONCILE_ENVIRONMENT`: whose purchases counted.
    public var environment: Settings.Environment
    public var dryRun: Bool
    public var verification: Verification
    /// The findings' summary; the findings are in the report files.
    public var summary: FindingSummary
    public var changes: Differ.QueueChanges
    public var timings: [String: Double]
    /// Where the report files were written.
    public var reportDirectory: String?
    /// Get Notification History since the previous run (SPEC section 14).
    public var notifications = RefundActivity.Notifications()
    /// Answers to refund requests since the previous run (SPEC section 14).
    public var consumption = RefundActivity.Consumption()
    /// What each policy decided in this run (SPEC section 17): every rule of the file, in its order.
    public var policies: [PolicyTally] = []
    /// What Google Play's stages did (SPEC section 18); nil with Play off.
    public var play: PlayRunSummary?
    /// The last 90 days' trends up to this run, its own night included (report.html draws them);
    /// nil when they could not be read.
    public var trends: Trends?

    /// Findings per kind, every kind listed.
    public var counts: [String: Int] {
        Dictionary(uniqueKeysWithValues: FindingKind.allCases.map { ($0.rawValue, summary.byKind[$0] ?? 0) })
    }

    /// Money at stake per kind and currency.
    public var valueAtRisk: [ValueAtRisk] { summary.valueAtRisk }

    /// Open findings the run detected.
    public var openFindings: Int { summary.open }

    /// Findings no finished run reported before: created by this run, or by a run killed before
    /// it could report them.
    public var newFindings: Int { summary.new }
}

/// Collects the run's findings from the diff's temporary table, joined to the queue, into the
/// session's `report_findings` table, and streams them from there into the report files after
/// the diff's transaction committed: however many findings there are, none is held in memory.
enum ReportBuilder {
    /// Fills `report_findings` from `diff_findings` and the open items the diff carried over
    /// unchanged, `diff_unchanged` (call inside the diff's transaction), and
    /// returns their summary, computed in PostgreSQL. Items first seen after the run's
    /// `resumesAfter` were never reported by a finished run, so they are new here even when a
    /// killed run created them.
    static func collect(_ run: RunContext) throws -> RunReport.FindingSummary {
        let connection = run.connection
        try connection.execute(SQL.collect, ["resumes_after": run.resumesAfter])

        var summary = RunReport.FindingSummary()
        for row in try connection.query(SQL.countsByKind) {
            let (count, new) = (try row.decode(Int.self, "n"), try row.decode(Int.self, "new"))
            summary.open += count
            summary.new += new
            if let kind = FindingKind(rawValue: try row.decode(String.self, "kind")) { summary.byKind[kind] = count }
        }
        summary.valueAtRisk = try connection.query(SQL.valueAtRisk).compactMap { row in
            guard let kind = FindingKind(rawValue: try row.decode(String.self, "kind")) else { return nil }
            return RunReport.ValueAtRisk(
                kind: kind, currency: try row.decode(String.self, "currency"), amountMilli: try row.decode(Int64.self, "amount"))
        }.sorted()
        for row in try connection.query(SQL.byPurchaseDay) {
            let count = try row.decode(Int.self, "n")
            if let day = try row.decode(Int64?.self, "day") { summary.byPurchaseDay[day] = count } else { summary.undated = count }
        }
        return summary
    }

    /// Streams `report_findings` in report order, one row at a time; an item carried over
    /// unchanged brings its stored evidence, and its rendered rows when `layout` (`ReportRowCache`)
    /// still holds them.
    static func streamFindings(
        on connection: Connection, layout: String, _ body: (RunReport.Finding) throws -> Void
    ) throws {
        // Each column's position, found once: thousands of rows, fifteen columns each.
        var at: FindingColumns?
        try connection.stream(SQL.findings, ["layout": layout]) { row in
            let column = try at ?? FindingColumns(row.columns)
            at = column
            guard let kind = FindingKind(rawValue: try row.decode(String.self, at: column.kind)) else { return }
            var rendered: ReportFormat.RenderedRows?
            if let json = try row.decode(String?.self, at: column.json) {
                rendered = ReportFormat.RenderedRows(
                    json: json, markdown: try row.decode(String.self, at: column.markdown),
                    html: try row.decode(String.self, at: column.html), csv: try row.decode(String.self, at: column.csv))
            }
            try body(
                RunReport.Finding(
                    reviewItemID: try row.decode(Int64?.self, at: column.reviewItemID),
                    isNew: try row.decode(Bool.self, at: column.isNew),
                    kind: kind, store: try row.decode(Store.self, at: column.store),
                    transactionID: try row.decode(String?.self, at: column.transactionID),
                    originalTransactionID: try row.decode(String?.self, at: column.originalTransactionID),
                    userID: try row.decode(String?.self, at: column.userID),
                    productID: try row.decode(String?.self, at: column.productID),
                    evidence: try row.decode(String?.self, at: column.evidence) ?? "{}",
                    amountMilli: try row.decode(Int64?.self, at: column.amountMilli),
                    currency: try row.decode(String?.self, at: column.currency),
                    purchaseDate: try row.decode(Date?.self, at: column.purchaseDate),
                    judgedRun: try row.decode(Int64?.self, at: column.judgedRun), rendered: rendered))
        }
    }

    /// The positions of `findings.sql`'s columns.
    private struct FindingColumns {
        let reviewItemID, isNew, kind, transactionID, originalTransactionID, userID, productID, evidence: Int
        let amountMilli, currency, purchaseDate, judgedRun, store, json, markdown, html, csv: Int

        init(_ columns: Columns) throws {
            func position(_ name: String) throws -> Int {
                guard let index = columns.index(of: name) else {
                    throw SQLScriptError(problem: "\(SQL.findings) returns no column \(name)")
                }
                return index
            }
            reviewItemID = try position("review_item_id")
            isNew = try position("is_new")
            kind = try position("kind")
            transactionID = try position("transaction_id")
            originalTransactionID = try position("original_transaction_id")
            userID = try position("user_id")
            productID = try position("product_id")
            evidence = try position("evidence")
            amountMilli = try position("amount_milli")
            currency = try position("currency")
            purchaseDate = try position("purchase_date")
            judgedRun = try position("judged_run")
            store = try position("store")
            json = try position("json")
            markdown = try position("markdown")
            html = try position("html")
            csv = try position("csv")
        }
    }

    /// Drops `report_findings` once the report is written.
    static func discard(on connection: Connection) throws {
        try connection.execute(SQL.discard)
    }

    /// The statements, in `sql/reports/`.
    enum SQL {
        static let collect: SQLFile = "reports/collect.sql"
        static let countsByKind: SQLFile = "reports/counts_by_kind.sql"
        static let valueAtRisk: SQLFile = "reports/value_at_risk.sql"
        static let byPurchaseDay: SQLFile = "reports/by_purchase_day.sql"
        static let findings: SQLFile = "reports/findings.sql"
        static let discard: SQLFile = "reports/discard.sql"
    }
}
