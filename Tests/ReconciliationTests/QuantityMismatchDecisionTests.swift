import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// A quantity_mismatch decided: the app is told to move the difference, never Apple's whole
/// quantity, so that what a decision moves is never worth more than the item's value, which the
/// approval threshold weighs (found by a hostile review: "granted" gave 2 coins where 1 was
/// missing, "revoked" took back 3 where 2 were over, both without a second person).
@Suite("Review: a quantity_mismatch decision moves the difference")
struct QuantityMismatchDecisionTests {
    /// DifferTests' world: t-q1 is 2 × coin42 (¥6.00 a unit) sold to u1, credited 1; t-q2 is 1 ×
    /// coin42 sold to u2, credited 3.
    static func item(_ transaction: String, in world: DifferTests) throws -> Int64 {
        try world.connection.query(
            "SELECT id FROM reconcile.review_items WHERE kind = 'quantity_mismatch' AND transaction_id = $1",
            [transaction])[0].decode(Int64.self, at: 0)
    }

    static func queued(_ outcome: TransitionOutcome) -> String? {
        outcome.outbox.map {
            "\($0.action.rawValue) \($0.productID ?? "?") ×\($0.quantity ?? 0) from \($0.fromUserID ?? "-") to \($0.toUserID ?? "-")"
        }
    }

    @Test func aShortDeliveryGrantedGivesTheMissingUnitOnly() throws {
        let world = try DifferTests()
        _ = try world.diff()
        let id = try Self.item("t-q1", in: world)
        // One unit missing, ¥6.00: under a CNY=11 threshold it needs nobody else, and gives one.
        let service = ReviewDecisions(connection: world.connection, approval: try #require(ApprovalThreshold(parsing: "CNY=11")), judgement: .asStored)
        #expect(throws: ReviewError.self) { try service.resolve(id: id, resolution: .revoked, by: "mei", note: nil) }
        let outcome = try service.resolve(id: id, resolution: .granted, by: "mei", note: "short delivery")
        #expect(outcome.item.status == .resolved)
        #expect(Self.queued(outcome) == "grant coin42 ×1 from - to u1")
    }

    @Test func anOverDeliveryRevokedTakesBackTheUnitsOverAppleOnly() throws {
        let world = try DifferTests()
        _ = try world.diff()
        let id = try Self.item("t-q2", in: world)
        // Two units over, ¥12.00: at the CNY=11 threshold the revoke waits for a second person.
        let strict = ReviewDecisions(connection: world.connection, approval: try #require(ApprovalThreshold(parsing: "CNY=11")), judgement: .asStored)
        #expect(throws: ReviewError.self) { try strict.resolve(id: id, resolution: .granted, by: "mei", note: nil) }
        #expect(try strict.resolve(id: id, resolution: .revoked, by: "mei", note: nil).item.status == .awaitingApproval)
        let approved = try strict.approve(id: id, by: "li", note: nil)
        #expect(approved.item.status == .resolved)
        #expect(Self.queued(approved) == "revoke coin42 ×2 from u2 to -")
    }
}
