import Foundation
import Postgres
@testable import Reconciliation
import Testing

/// A run's report files against the same findings rendered from their items as the queue holds
/// them after the run (the evidence, account, amount and purchase date the run detected, or
/// carried over): what a run rendering every row writes. A row the run wrote from
/// `reconcile.report_rows` instead (kept for an item carried over unjudged, or judged again with
/// the same inputs: migrations 0023 and 0024) must be that same text, so a kept row that no longer
/// holds shows the night it is used.
enum ReportRowsCheck {
    static func problems(
        _ report: RunReport, reader: Reader, on connection: Connection
    ) throws -> (problems: [String], compared: Int) {
        let directory = URL(fileURLWithPath: report.reportDirectory ?? "")
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: directory.appendingPathComponent("report.json")))
        let listed = ((json as? [String: Any])?["findings"] as? [[String: Any]]) ?? []
        let ids = listed.compactMap { ($0["review_item_id"] as? NSNumber)?.int64Value }
        var items: [Int64: RunReport.Finding] = [:]
        for row in try connection.query(
            """
            SELECT id, kind, transaction_id, original_transaction_id, detected_user_id, product_id, evidence::text,
                   amount_milli, currency, purchase_date, store
              FROM reconcile.review_items WHERE id = ANY($1::bigint[])
            """, [ids])
        {
            guard let kind = FindingKind(rawValue: try row.decode(String.self, at: 1)) else { continue }
            let id = try row.decode(Int64.self, at: 0)
            var finding = RunReport.Finding(
                reviewItemID: id, isNew: false, kind: kind, transactionID: try row.decode(String?.self, at: 2),
                originalTransactionID: try row.decode(String?.self, at: 3), userID: try row.decode(String?.self, at: 4),
                productID: try row.decode(String?.self, at: 5), evidence: try row.decode(String.self, at: 6),
                amountMilli: try row.decode(Int64?.self, at: 7), currency: try row.decode(String?.self, at: 8),
                purchaseDate: try row.decode(Date?.self, at: 9))
            finding.store = try #require(Store(rawValue: try row.decode(String.self, at: 10)))
            items[id] = finding
        }
        var findings: [RunReport.Finding] = []
        for entry in listed {
            guard let id = (entry["review_item_id"] as? NSNumber)?.int64Value, var finding = items[id] else {
                return (["[a report row is not its item's] report.json lists \(entry["kind"] ?? "?") "
                    + "\(entry["transaction_id"] ?? "-") without an item"], 0)
            }
            finding.isNew = entry["new"] as? Bool ?? false
            findings.append(finding)
        }
        var problems: [String] = []
        for format in ReportFormat.allCases {
            let rows = findings.enumerated().map { format.row($1, index: $0, reader: reader) }
            let text = try String(contentsOf: directory.appendingPathComponent(format.fileName), encoding: .utf8)
            guard !text.hasSuffix(rows.joined() + format.footer(report, reader: reader)) else { continue }
            let first = rows.first { !text.contains($0) }.map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: ",").union(.whitespacesAndNewlines))
            }
            problems.append(
                "[a report row is not its item's] \(format.fileName) does not list the findings as rendered from their "
                    + "items; the first row it lacks: \((first ?? "none, but not in order").prefix(1500))")
        }
        return (problems, findings.count)
    }
}

/// What the digest of a kept row's inputs (`sql/reports/collect.sql`, migration 0024) covers: a
/// finding's row is rendered from the finding's fields and the reader (the layout), so every
/// field but `isNew` (rows are kept as not new) and the cache's own must be in the digest. A field
/// added to the finding fails here until the digest takes it.
@Suite struct ReportRowInputsTests {
    @Test func theDigestCoversEveryFieldARowIsRenderedFrom() throws {
        let finding = RunReport.Finding(
            reviewItemID: 1, isNew: false, kind: .missedDelivery, transactionID: nil, originalTransactionID: nil,
            userID: nil, productID: nil, evidence: "{}", amountMilli: nil, currency: nil, purchaseDate: nil)
        let fields = Set(Mirror(reflecting: finding).children.compactMap(\.label))
            .subtracting(["isNew", "judgedRun", "rendered"])
        let columns: [String: String] = [
            "reviewItemID": "review_item_id", "kind": "kind", "transactionID": "transaction_id",
            "originalTransactionID": "original_transaction_id", "userID": "user_id", "productID": "product_id",
            "evidence": "evidence", "amountMilli": "amount_milli", "currency": "currency",
            "purchaseDate": "purchase_date", "store": "store",
        ]
        #expect(fields == Set(columns.keys), "a field the digest does not name: \(fields.subtracting(columns.keys))")

        let text = try #require(SQLFile.text("reports/collect.sql"))
        let start = try #require(text.range(of: "sha256(convert_to(ROW(")).upperBound
        let end = try #require(text[start...].range(of: ")::text")).lowerBound
        let digested = Set(text[start..<end].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "f.", with: "")
        })
        #expect(digested == Set(columns.values))
    }
}
