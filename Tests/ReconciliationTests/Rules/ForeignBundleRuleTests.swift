import Foundation
@testable import Reconciliation
import Testing

/// `foreign_bundle` (SPEC section 5): an upload's receipt or transaction belongs to a bundle id not
/// in `RECONCILE_BUNDLE_IDS`. About the upload, not a transaction's delivery.
@Suite("Rule: foreign_bundle")
struct ForeignBundleRuleTests {
    @Test func anotherAppsUploadIsFlaggedForItsUploader() throws {
        let world = try RuleWorld("foreign")
        try world.upload(by: "u1", claimed: "t-other", bundle: "com.other.game")
        #expect(try world.findings() == [.init(.foreignBundle, "t-other", "u1")])
        #expect(FindingKind.foreignBundle.isAboutAnUpload)
    }

    /// Near misses: an upload of the accepted bundle; another app's upload that Apple rejected or
    /// has not verified yet (its bundle is not known).
    @Test func nearMissesAreNotFlagged() throws {
        let world = try RuleWorld("foreign_near")
        try world.apple("t1")
        try world.upload(by: "u1", claimed: "t1")
        try world.deliver("t1", to: "u1")
        try world.upload(by: "u2", claimed: "t2", state: "pending", bundle: "com.other.game")
        #expect(try world.findings() == [])
    }
}
