import Foundation
@testable import Reconciliation
import Testing

/// `product_mismatch` (SPEC section 5): a delivery names another product than Apple's transaction.
@Suite("Rule: product_mismatch")
struct ProductMismatchRuleTests {
    @Test func anotherProductCreditedIsAMismatch() throws {
        let world = try RuleWorld("product")
        try world.apple("t1", product: "coin42")
        try world.upload(by: "u1", claimed: "t1")
        try world.deliver("t1", to: "u1", product: "coin4886")
        #expect(try world.findings() == [.init(.productMismatch, "t1", "u1")])
    }

    /// Near misses: the product Apple sold; a wrong product's row revoked and the right one credited;
    /// the purchase younger than the grace period.
    @Test func nearMissesAreNotFlagged() throws {
        let world = try RuleWorld("product_near")
        try world.apple("right")
        try world.deliver("right", to: "u1")
        try world.apple("corrected")
        try world.deliver("corrected", to: "u1", product: "coin4886", revoked: true)
        try world.deliver("corrected", to: "u1")
        try world.apple("young", purchased: world.now.addingTimeInterval(-60))
        try world.deliver("young", to: "u1", product: "coin4886")
        try world.upload(by: "u1", carrying: ["right", "corrected", "young"])
        #expect(try world.findings() == [])
    }
}
