import Foundation
@testable import Reconciliation
import Testing

/// `refunded_delivery` (SPEC section 5): Apple revoked or refunded the transaction and the delivery
/// is not revoked.
@Suite("Rule: refunded_delivery")
struct RefundedDeliveryRuleTests {
    @Test func aRefundStillCreditedIsFlagged() throws {
        let world = try RuleWorld("refunded")
        try world.apple("t1", refunded: true)
        try world.upload(by: "u1", claimed: "t1")
        try world.deliver("t1", to: "u1")
        #expect(try world.findings() == [.init(.refundedDelivery, "t1", "u1")])
    }

    /// Never flagged: a delivery already revoked after the refund; a refunded purchase never credited.
    @Test func nearMissesAreNotFlagged() throws {
        let world = try RuleWorld("refunded_near")
        try world.apple("revoked", refunded: true)
        try world.deliver("revoked", to: "u1", revoked: true)
        try world.apple("never", refunded: true)
        try world.upload(by: "u1", carrying: ["revoked", "never"])
        #expect(try world.findings() == [])
    }
}
