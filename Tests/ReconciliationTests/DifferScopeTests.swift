import Foundation
import Postgres
import Reconciliation
import Testing

/// The same stages over the support desk's scope (given transactions), the evidence as the
/// `Evidence` model reads it, and the action's accounts stored with each item.
extension DifferTests {
    /// The findings of a diff over exactly `transactions`, without touching the queue.
    func findings(of transactions: [String]) throws -> Set<Expected> {
        let run = try newRun()
        return try connection.transaction {
            try differ.computeFindings(
                Differ.Parameters(
                    runID: run, bundleIDs: ["com.hncs.szj"], environment: .production,
                    judgeBefore: Date().addingTimeInterval(-1800), scope: .transactions(transactions),
                    serverAPIEnabled: false),
                on: connection)
            return Set(try connection.query("SELECT kind, transaction_id, user_id FROM diff_findings").map { row in
                let kind = try row.decode(String.self, "kind")
                return Expected(
                    kind: kind, transaction: try row.decode(String?.self, "transaction_id"),
                    user: try row.decode(String?.self, "user_id"), action: FindingKind(rawValue: kind)!.suggestedAction.rawValue)
            })
        }
    }

    @Test func aDiffOverGivenTransactionsFindsWhatTheRunFindsForThem() throws {
        let everyTransaction = Set(Self.expected.compactMap(\.transaction))
        #expect(try findings(of: Array(everyTransaction)) == Self.expected)
        for transaction in ["t-m1", "t-w1", "t-d2", "t-u1", "t-f2", "t-s1"] {
            #expect(
                try findings(of: [transaction]) == Self.expected.filter { $0.transaction == transaction },
                "\(transaction)")
        }
        #expect(try findings(of: []).isEmpty)
    }

    @Test func everyFindingsEvidenceReadsAsTheEvidenceModel() throws {
        _ = try diff()
        let rows = try connection.query("SELECT kind, transaction_id, evidence::text AS evidence FROM reconcile.review_items")
        #expect(rows.count == Self.expected.count)
        for row in rows {
            let evidence = try Evidence(json: try row.decode(String.self, "evidence"))
            let transaction = try row.decode(String?.self, "transaction_id")
            if let apple = evidence.appleTransaction { #expect(apple.transactionID == transaction) }
            if try row.decode(String.self, "kind") != "unverified_delivery" {
                #expect(evidence.appleTransaction != nil || evidence.uploads.contains { $0.verification == "verified" })
            }
        }
    }

    @Test func theActionsAccountsAreStoredWithTheItem() throws {
        _ = try diff()
        func accounts(_ fingerprintPrefix: String) throws -> (String?, String?) {
            let row = try #require(try connection.queryFirst(
                "SELECT grant_to_user_id, revoke_from_user_id FROM reconcile.review_items WHERE fingerprint LIKE $1",
                fingerprintPrefix + "%"))
            return (try row.decode(String?.self, "grant_to_user_id"), try row.decode(String?.self, "revoke_from_user_id"))
        }
        // Moved from the account the wrong delivery credited to the buyer.
        #expect(try accounts("wrong_account:t-w1:") == ("u4", "u5"))
        // Granted to the buyer; nothing to take back.
        #expect(try accounts("missed_delivery:t-m1") == ("u1", nil))
        // Revoked from the account holding the duplicate.
        #expect(try accounts("duplicate_delivery:t-d1").1 == "u3")
    }
}
