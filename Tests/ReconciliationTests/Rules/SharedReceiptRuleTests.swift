import Foundation
@testable import Reconciliation
import Testing

/// `shared_receipt` (SPEC section 5): the same transaction uploaded by two or more accounts.
@Suite("Rule: shared_receipt")
struct SharedReceiptRuleTests {
    @Test func oneTransactionUploadedByTwoAccountsIsShared() throws {
        let world = try RuleWorld("shared")
        try world.apple("t1")
        try world.upload(by: "a", claimed: "t1")
        try world.upload(by: "b", claimed: "t1")
        try world.deliver("t1", to: "a")
        #expect(try world.findings() == [.init(.sharedReceipt, "t1", nil)])
    }

    /// Near misses: one account uploading the same transaction twice (a retry of the client);
    /// a transaction only a customer's Server API history lists beside an upload (not an upload).
    @Test func nearMissesAreNotFlagged() throws {
        let world = try RuleWorld("shared_near")
        try world.apple("t1")
        try world.upload(by: "a", claimed: "t1")
        try world.upload(by: "a", claimed: "t1")
        try world.deliver("t1", to: "a")
        #expect(try world.findings() == [])
    }
}
