import Foundation
@testable import Reconciliation
import Testing

/// `wrong_account` (SPEC section 5): the buyer is known and a delivery went to another account.
@Suite("Rule: wrong_account")
struct WrongAccountRuleTests {
    static let token = "6f0d2f4c-0f7a-4a59-9a55-2d1e2f3a4b5c"

    @Test func aCreditToAnotherAccountThanTheTokensIsWrong() throws {
        let world = try RuleWorld("wrong")
        try world.mapToken(Self.token, to: "buyer")
        try world.apple("t1", token: Self.token)
        try world.upload(by: "other", claimed: "t1")
        try world.deliver("t1", to: "other")
        #expect(try world.findings() == [.init(.wrongAccount, "t1", "buyer")])
    }

    @Test func aUsernameHashingToAnotherAccountNamesTheBuyer() throws {
        let world = try RuleWorld("wrong_username")
        let hash = try world.connection.query("SELECT encode(sha256(convert_to('buyer', 'UTF8')), 'hex')")[0]
            .decode(String.self, at: 0)
        try world.upload(by: "buyer")
        try world.apple("t1")
        try world.upload(by: "other", claimed: "t1", username: hash)
        try world.deliver("t1", to: "other")
        #expect(try world.findings() == [.init(.wrongAccount, "t1", "buyer")])
    }

    /// Near misses: credited to the token's account; the buyer unknown (two uploaders, no binding:
    /// a shared receipt instead); a token no account maps to (the uploader is the buyer).
    @Test func nearMissesAreNotWrongAccount() throws {
        let world = try RuleWorld("wrong_near")
        try world.mapToken(Self.token, to: "buyer")
        try world.apple("right", token: Self.token)
        try world.upload(by: "buyer", claimed: "right")
        try world.deliver("right", to: "buyer")
        try world.apple("shared")
        try world.upload(by: "a", claimed: "shared")
        try world.upload(by: "b", claimed: "shared")
        try world.deliver("shared", to: "a")
        try world.apple("unmapped", token: "0e6a4a39-6a2c-4d8c-9a3e-7a1d2e3f4a5b")
        try world.upload(by: "c", claimed: "unmapped")
        try world.deliver("unmapped", to: "c")
        #expect(try world.findings() == [.init(.sharedReceipt, "shared", nil)])
    }

    /// A retrying upload of the credited account holds the finding until it is verified.
    @Test func aRetryingUploadOfTheCreditedAccountHoldsIt() throws {
        let world = try RuleWorld("wrong_hold")
        try world.mapToken(Self.token, to: "buyer")
        try world.apple("t1", token: Self.token)
        try world.upload(by: "other", claimed: "t1", state: "retry")
        try world.deliver("t1", to: "other")
        #expect(try world.findings().filter { $0.kind == .wrongAccount } == [])
    }
}
