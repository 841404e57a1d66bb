import Foundation
@testable import Reconciliation
import Testing

/// `environment_mismatch` (SPEC section 5): a sandbox transaction delivered while the counted
/// environment is production.
@Suite("Rule: environment_mismatch")
struct EnvironmentMismatchRuleTests {
    @Test func aSandboxPurchaseCreditedUnderProductionIsFlagged() throws {
        let world = try RuleWorld("environment")
        try world.apple("t1", environment: "Sandbox")
        try world.upload(by: "u1", claimed: "t1")
        try world.deliver("t1", to: "u1")
        #expect(try world.findings() == [.init(.environmentMismatch, "t1", "u1")])
    }

    /// Where sandbox money counts (a staging deployment) the rule does not run: the credit is right.
    @Test func underSandboxTheSameCreditIsRight() throws {
        let world = try RuleWorld("environment_sandbox")
        try world.apple("t1", environment: "Sandbox")
        try world.upload(by: "u1", claimed: "t1")
        try world.deliver("t1", to: "u1")
        #expect(try world.findings(environment: .sandbox) == [])
        #expect(!FindingKind.environmentMismatch.applies(in: .sandbox))
    }

    /// Never flagged: an undelivered sandbox purchase under production (nor is it missed).
    @Test func anUndeliveredSandboxPurchaseIsNothing() throws {
        let world = try RuleWorld("environment_near")
        try world.apple("t1", environment: "Sandbox")
        try world.upload(by: "u1", claimed: "t1")
        #expect(try world.findings() == [])
    }
}
