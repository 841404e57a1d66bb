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
    }

    public var runID: Int64
    public var status: String
    public var startedAt: Date
    public var finishedAt: Date
    public var since: Date?
    public var until: Date
    public var environment: String
    public var dryRun: Bool
    public var verification: Verification
    public var findings: [Finding]
    public var changes: Differ.QueueChanges
    public var timings: [String: Double]
    /// Where the report files were written.
    public var reportDirectory: String?

    /// Findings per kind, every kind listed.
    public var counts: [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: FindingKind.allCases.map { ($0.rawValue, 0) })
        for finding in findings { counts[finding.kind.rawValue, default: 0] += 1 }
        return counts
    }

    /// Money at stake per kind and currency.
    public var valueAtRisk: [(kind: FindingKind, currency: String, amountMilli: Int64)] {
        var sums: [String: [String: Int64]] = [:]
        for finding in findings {
            guard let amount = finding.amountMilli, let currency = finding.currency else { continue }
            sums[finding.kind.rawValue, default: [:]][currency, default: 0] += amount
        }
        return FindingKind.allCases.flatMap { kind in
            (sums[kind.rawValue] ?? [:]).sorted { $0.key < $1.key }.map { (kind, $0.key, $0.value) }
        }
    }

    /// Findings no finished run reported before: created by this run, or by a run killed before
    /// it could report them.
    public var newFindings: Int { findings.filter(\.isNew).count }
}

/// Reads the run's findings from the diff's temporary table, joined to the queue.
enum ReportBuilder {
    /// `resumesAfter`: items first seen after that run were never reported by a finished run,
    /// so they are new here even when a killed run created them.
    static func findings(resumesAfter: Int64, on connection: Connection) throws -> [RunReport.Finding] {
        let severityOrder = "CASE f.kind " + FindingKind.allCases.map {
            "WHEN '\($0.rawValue)' THEN \(["high": 0, "medium": 1, "low": 2][$0.severity]!)"
        }.joined(separator: " ") + " END"
        var findings: [RunReport.Finding] = []
        try connection.stream(
            """
            SELECT r.id, (r.id IS NULL OR r.first_seen_run > $1) AS is_new, f.kind, f.transaction_id,
                   f.original_transaction_id, f.user_id, f.product_id, f.evidence::text AS evidence,
                   f.amount_milli, f.currency, f.purchase_date
              FROM diff_findings f LEFT JOIN reconcile.review_items r ON r.fingerprint = f.fingerprint
             WHERE r.id IS NULL OR r.status IN ('open', 'in_review')
             ORDER BY \(severityOrder), f.kind, f.transaction_id, f.user_id
            """, [resumesAfter]
        ) { row in
            guard let kind = FindingKind(rawValue: try row.decode(String.self, "kind")) else { return }
            findings.append(
                RunReport.Finding(
                    reviewItemID: try row.decode(Int64?.self, "id"), isNew: try row.decode(Bool.self, "is_new"),
                    kind: kind, transactionID: try row.decode(String?.self, "transaction_id"),
                    originalTransactionID: try row.decode(String?.self, "original_transaction_id"),
                    userID: try row.decode(String?.self, "user_id"), productID: try row.decode(String?.self, "product_id"),
                    evidence: try row.decode(String?.self, "evidence") ?? "{}",
                    amountMilli: try row.decode(Int64?.self, "amount_milli"),
                    currency: try row.decode(String?.self, "currency"),
                    purchaseDate: try row.decode(Date?.self, "purchase_date")))
        }
        return findings
    }
}
