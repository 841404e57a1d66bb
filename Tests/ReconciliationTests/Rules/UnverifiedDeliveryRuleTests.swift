import Foundation
@testable import Reconciliation
import Testing

/// `unverified_delivery` (SPEC section 5): a delivery whose transaction Apple rejects or does not
/// know, once every upload of that delivery's account is verified.
@Suite("Rule: unverified_delivery")
struct UnverifiedDeliveryRuleTests {
    @Test func aCreditNoSourceOfApplesKnowsIsUnverified() throws {
        let world = try RuleWorld("unverified")
        try world.upload(by: "u1")
        try world.deliver("forged", to: "u1", product: "coin4886")
        #expect(try world.findings() == [.init(.unverifiedDelivery, "forged", "u1")])
    }

    @Test func aCreditWhoseOnlyUploadApplesRejectedIsUnverified() throws {
        let world = try RuleWorld("unverified_invalid")
        try world.upload(by: "u1", claimed: "forged", state: "invalid")
        try world.deliver("forged", to: "u1")
        #expect(try world.findings() == [.init(.unverifiedDelivery, "forged", "u1")])
    }

    /// The hold: while an upload of the account is pending or retrying, nothing is said.
    @Test(arguments: ["pending", "retry"])
    func anUnfinishedVerificationOfTheAccountHoldsIt(state: String) throws {
        let world = try RuleWorld("unverified_hold")
        try world.upload(by: "u1", claimed: "maybe", state: state)
        try world.deliver("maybe", to: "u1")
        #expect(try world.findings() == [])
    }
}
