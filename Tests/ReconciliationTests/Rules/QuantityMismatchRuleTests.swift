import Foundation
@testable import Reconciliation
import Testing

/// `quantity_mismatch` (SPEC section 5): the unrevoked deliveries total another quantity than
/// Apple's, and it is not a duplicate.
@Suite("Rule: quantity_mismatch")
struct QuantityMismatchRuleTests {
    @Test func tooFewAndTooManyUnitsOnOneRowAreMismatches() throws {
        let world = try RuleWorld("quantity")
        try world.apple("few", quantity: 3)
        try world.deliver("few", to: "u1", quantity: 1)
        try world.apple("many", quantity: 1)
        try world.deliver("many", to: "u1", quantity: 3)
        try world.upload(by: "u1", carrying: ["few", "many"])
        #expect(try world.findings() == [.init(.quantityMismatch, "few", "u1"), .init(.quantityMismatch, "many", "u1")])
    }

    /// Near misses: Apple's quantity on one row; made up by a correction on a second row; a
    /// wrong row revoked and replaced.
    @Test func nearMissesAreNotFlagged() throws {
        let world = try RuleWorld("quantity_near")
        try world.apple("exact", quantity: 3)
        try world.deliver("exact", to: "u1", quantity: 3)
        try world.apple("made-up", quantity: 3)
        try world.deliver("made-up", to: "u1", quantity: 1)
        try world.deliver("made-up", to: "u1", quantity: 2)
        try world.apple("replaced", quantity: 2)
        try world.deliver("replaced", to: "u1", quantity: 1, revoked: true)
        try world.deliver("replaced", to: "u1", quantity: 2)
        try world.upload(by: "u1", carrying: ["exact", "made-up", "replaced"])
        #expect(try world.findings() == [])
    }
}
