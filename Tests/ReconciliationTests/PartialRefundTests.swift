import AppStore
import AppStoreSimulator
import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Partial refunds and Apple's prices (SPEC section 14), end to end: a 3-pack of coins bought
/// and delivered, refunded by the simulator, learned from the customer's Server API history.
@Suite("Scenario: partial refunds and multi-quantity prices")
struct PartialRefundTests {
    /// One 3-pack priced 90.000 CNY in total (Apple's `price` is for the whole quantity), uploaded
    /// and delivered with `delivered` coins, then refunded as `refund` says.
    static func threePack(
        _ name: String, delivered: Int, refund: (RevocationType, Int?)
    ) async throws -> (RunReport, Connection, CreatedTransaction) {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world(name)
        let bought = try sim.createTransaction(SimulatedTransaction(
            productId: "coins3", customer: "amy", bundleId: "com.hncs.szj", environment: .production,
            type: .consumable, quantity: 3, purchaseDate: Date().addingTimeInterval(-86_400), price: 90_000,
            currency: "CNY"))
        try connection.plantSignedTransactionUpload(
            bought.signedTransaction, claiming: bought.transactionId, by: "amy", age: "20 hours")
        try connection.plantDelivery(
            bought.transactionId, to: "amy", product: "coins3", quantity: delivered, age: "20 hours")
        _ = try sim.refundTransaction(bought.transactionId, type: refund.0, percentage: refund.1)
        let report = try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            return try await ServerAPIScenarioTests.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
        }
        return (report, connection, bought)
    }

    static func evidence(_ finding: RunReport.Finding) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(finding.evidence.utf8)) as? [String: Any])
    }

    @Test func aThreePackRefundedOneThirdAsksToRevokeOneCoinWorthAThird() async throws {
        let (report, connection, bought) = try await Self.threePack(
            "refund_prorated", delivered: 3, refund: (.refundProrated, 33_333))
        let findings = try report.findings
        #expect(findings.map(\.kind) == [.refundedDelivery])
        let evidence = try Self.evidence(try #require(findings.first))
        #expect(evidence["refunded_quantity"] as? Int == 1)
        #expect(evidence["revocation_type"] as? String == "REFUND_PRORATED")
        #expect(evidence["revocation_percentage"] as? Int == 33_333)
        #expect(report.valueAtRisk == [.init(kind: .refundedDelivery, currency: "CNY", amountMilli: 30_000)])
        // The white table keeps what Apple said about the refund and the Apple ID.
        let row = try connection.query(
            """
            SELECT revocation_type, revocation_percentage, app_transaction_id
              FROM reconcile.apple_transactions WHERE transaction_id = $1
            """, [bought.transactionId])[0]
        #expect(try row.decode(String?.self, at: 0) == "REFUND_PRORATED")
        #expect(try row.decode(Int?.self, at: 1) == 33_333)
        #expect(try row.decode(String?.self, at: 2) != nil)
        // Deciding it revokes the refunded coin only.
        let item = try #require(findings.first?.reviewItemID)
        let service = ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
        _ = try service.resolve(id: item, resolution: .revoked, by: "ann", note: nil)
        let outbox = try connection.query(
            "SELECT action, quantity, from_user_id FROM reconcile.action_outbox WHERE review_item_id = $1", [item])
        #expect(try outbox.map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(Int.self, at: 1))" }
            == ["revoke 1"])
    }

    /// Delivered 1 coin of the 3-pack, then one coin refunded: the customer is owed 2 and holds 1,
    /// so "granted" gives the 1 coin still owed, not Apple's 3 (a grant never moves more than the
    /// item's value, which the approval threshold weighs).
    @Test func aShortDeliveryOfARefundedPackGrantsOnlyTheCoinStillOwed() async throws {
        let (report, connection, _) = try await Self.threePack(
            "refund_prorated_short", delivered: 1, refund: (.refundProrated, 33_333))
        let findings = try report.findings
        #expect(findings.map(\.kind) == [.quantityMismatch])
        let item = try #require(findings.first?.reviewItemID)
        _ = try ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
            .resolve(id: item, resolution: .granted, by: "ann", note: nil)
        let outbox = try connection.query(
            "SELECT action, quantity, to_user_id FROM reconcile.action_outbox WHERE review_item_id = $1", [item])
        #expect(try outbox.map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(Int.self, at: 1))" }
            == ["grant 1"])
    }

    @Test func aDeliveryAlreadyReducedByTheRefundedCoinIsNotFlagged() async throws {
        let (report, _, _) = try await Self.threePack(
            "refund_prorated_reduced", delivered: 2, refund: (.refundProrated, 33_333))
        #expect(try report.findings.isEmpty, "neither refunded_delivery nor quantity_mismatch")
        #expect(report.status == "completed")
    }

    @Test func aFullRefundOfAThreePackRisksItsPriceOnceNotThreeTimes() async throws {
        let (report, _, _) = try await Self.threePack("refund_full_pack", delivered: 3, refund: (.refundFull, nil))
        let findings = try report.findings
        #expect(findings.map(\.kind) == [.refundedDelivery])
        #expect(try Self.evidence(try #require(findings.first))["refunded_quantity"] as? Int == 3)
        #expect(report.valueAtRisk == [.init(kind: .refundedDelivery, currency: "CNY", amountMilli: 90_000)])
    }

    /// Family Sharing access withdrawn: the goods go back, but no money went back to anyone.
    @Test func aFamilyRevokeAsksToRevokeEverythingWithNothingAtRisk() async throws {
        let (report, _, _) = try await Self.threePack("family_revoke", delivered: 3, refund: (.familyRevoke, nil))
        let findings = try report.findings
        #expect(findings.map(\.kind) == [.refundedDelivery])
        let evidence = try Self.evidence(try #require(findings.first))
        #expect(evidence["refunded_quantity"] as? Int == 3)
        #expect(evidence["revocation_type"] as? String == "FAMILY_REVOKE")
        #expect(report.valueAtRisk.isEmpty)
    }
}
