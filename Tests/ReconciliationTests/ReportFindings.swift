import Foundation
@testable import Reconciliation
import Testing

/// A run's findings as its `report.json` lists them: the run streams them to the file and keeps
/// none in memory, so tests read them back from there (amounts and dates are not in the JSON).
extension RunReport {
    var findings: [Finding] {
        get throws {
            let directory = try #require(reportDirectory, "the run wrote no report")
            let data = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent("report.json"))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let findings = try #require(json["findings"] as? [[String: Any]])
            return try findings.map { object in
                let evidence = try JSONSerialization.data(withJSONObject: object["evidence"] ?? [:], options: [.sortedKeys])
                return Finding(
                    reviewItemID: (object["review_item_id"] as? NSNumber)?.int64Value,
                    isNew: try #require(object["new"] as? Bool),
                    kind: try #require(FindingKind(rawValue: object["kind"] as? String ?? "")),
                    transactionID: object["transaction_id"] as? String,
                    originalTransactionID: object["original_transaction_id"] as? String,
                    userID: object["user_id"] as? String, productID: object["product_id"] as? String,
                    evidence: String(decoding: evidence, as: UTF8.self), amountMilli: nil, currency: nil, purchaseDate: nil)
            }
        }
    }
}
