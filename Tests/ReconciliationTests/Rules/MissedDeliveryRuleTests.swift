import Foundation
@testable import Reconciliation
import Testing

/// `missed_delivery` (SPEC section 5): Apple confirms a paid, unrevoked transaction in a counted
/// environment and no unrevoked delivery matches.
@Suite("Rule: missed_delivery")
struct MissedDeliveryRuleTests {
    @Test func aPaidPurchaseNobodyCreditedIsMissedForItsBuyer() throws {
        let world = try RuleWorld("missed")
        try world.apple("t1")
        try world.upload(by: "u1", claimed: "t1")
        #expect(try world.findings() == [.init(.missedDelivery, "t1", "u1")])
    }

    @Test func aRevokedCreditIsNoDelivery() throws {
        let world = try RuleWorld("missed_revoked")
        try world.apple("t1")
        try world.upload(by: "u1", claimed: "t1")
        try world.deliver("t1", to: "u1", revoked: true)
        #expect(try world.findings() == [.init(.missedDelivery, "t1", "u1")])
    }

    /// Near misses: credited; younger than the grace period; refunded and never credited; a
    /// sandbox purchase under production; a restore credited once for its original; its
    /// verification still pending or retrying.
    @Test func nearMissesAreNotFlagged() throws {
        let world = try RuleWorld("missed_near")
        try world.apple("credited")
        try world.deliver("credited", to: "u1")
        try world.apple("young", purchased: world.now.addingTimeInterval(-300))
        try world.apple("refunded", refunded: true)
        try world.apple("sandbox", environment: "Sandbox")
        try world.apple("unlock-1", product: "unlock")
        try world.apple("unlock-restore", original: "unlock-1", product: "unlock")
        try world.deliver("unlock-1", to: "u1", product: "unlock")
        try world.upload(by: "u1", carrying: ["credited", "young", "refunded", "sandbox", "unlock-1", "unlock-restore"])
        try world.apple("pending")
        try world.upload(by: "u2", claimed: "pending", state: "pending")
        try world.apple("retrying")
        try world.upload(by: "u3", claimed: "retrying", state: "retry")
        #expect(try world.findings() == [])
    }
}
