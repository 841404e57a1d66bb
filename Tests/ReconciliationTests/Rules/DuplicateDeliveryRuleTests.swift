import Foundation
@testable import Reconciliation
import Testing

/// `duplicate_delivery` (SPEC section 5): two or more unrevoked deliveries for one transaction
/// whose quantities total more than Apple's (a non-consumable: two or more for one original).
@Suite("Rule: duplicate_delivery")
struct DuplicateDeliveryRuleTests {
    @Test func twoCreditsOfOneUnitAreADuplicate() throws {
        let world = try RuleWorld("duplicate")
        try world.apple("t1")
        try world.upload(by: "u1", claimed: "t1")
        try world.deliver("t1", to: "u1")
        try world.deliver("t1", to: "u1")
        #expect(try world.findings() == [.init(.duplicateDelivery, "t1", "u1")])
    }

    @Test func aNonConsumableCreditedForItsPurchaseAndItsRestoreIsADuplicate() throws {
        let world = try RuleWorld("duplicate_restore")
        try world.apple("u-1", product: "unlock")
        try world.apple("u-1r", original: "u-1", product: "unlock")
        try world.upload(by: "u1", carrying: ["u-1", "u-1r"])
        try world.deliver("u-1", to: "u1", product: "unlock")
        try world.deliver("u-1r", to: "u1", product: "unlock")
        #expect(try world.findings().map(\.kind) == [.duplicateDelivery])
    }

    /// Near misses: rows that make up Apple's quantity (a correction as a second row); a second
    /// row revoked; a restore credited once.
    @Test func nearMissesAreNotFlagged() throws {
        let world = try RuleWorld("duplicate_near")
        try world.apple("three", quantity: 3)
        try world.deliver("three", to: "u1", quantity: 1)
        try world.deliver("three", to: "u1", quantity: 2)
        try world.apple("revoked")
        try world.deliver("revoked", to: "u1")
        try world.deliver("revoked", to: "u1", revoked: true)
        try world.apple("u-1", product: "unlock")
        try world.apple("u-1r", original: "u-1", product: "unlock")
        try world.deliver("u-1", to: "u1", product: "unlock")
        try world.upload(by: "u1", carrying: ["three", "revoked", "u-1", "u-1r"])
        #expect(try world.findings() == [])
    }

    /// Several rows short of Apple's quantity are a quantity mismatch, not a duplicate.
    @Test func severalRowsShortAreAQuantityMismatch() throws {
        let world = try RuleWorld("duplicate_short")
        try world.apple("three", quantity: 3)
        try world.upload(by: "u1", claimed: "three")
        try world.deliver("three", to: "u1")
        try world.deliver("three", to: "u1")
        #expect(try world.findings() == [.init(.quantityMismatch, "three", "u1")])
    }
}
