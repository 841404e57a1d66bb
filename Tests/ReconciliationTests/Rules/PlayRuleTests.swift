import Foundation
import Postgres
@testable import Reconciliation
import Testing

/// The ten finding kinds on Google Play (SPEC section 18's "Findings"), by the same rules as
/// Apple's: each planted beside an Apple twin, so that every Play finding is told from Apple's by
/// its store and fingerprint, and the never-flagged cases stay unflagged.
@Suite("Rules: Google Play")
struct PlayRuleTests {
    private func play(_ kind: FindingKind, _ transaction: String?, _ user: String?) -> RuleWorld.StoreFound {
        .init(kind: kind, transaction: transaction, user: user, store: .googlePlay)
    }

    @Test func eachKindIsFoundOnPlayWithItsStore() throws {
        let world = try RuleWorld("play_kinds")
        // missed_delivery: paid, uploaded by its buyer, never credited.
        try world.play("GPA.0000-0000-0000-00001", binding: "alice")
        try world.playUpload(by: "alice", carrying: "GPA.0000-0000-0000-00001", binding: "alice")
        // duplicate_delivery: credited twice.
        try world.play("GPA.0000-0000-0000-00002", binding: "bob")
        try world.playUpload(by: "bob", carrying: "GPA.0000-0000-0000-00002", binding: "bob")
        try world.deliver("GPA.0000-0000-0000-00002", to: "bob")
        try world.deliver("GPA.0000-0000-0000-00002", to: "bob")
        // wrong_account: the signed binding names carol (by her SHA-256); dave was credited.
        try world.upload(by: "carol")
        let carolHash = try world.connection.query("SELECT reconcile.account_hash('carol')")[0].decode(String.self, at: 0)
        try world.play("GPA.0000-0000-0000-00003", binding: carolHash)
        try world.playUpload(by: "dave", carrying: "GPA.0000-0000-0000-00003", binding: carolHash)
        try world.deliver("GPA.0000-0000-0000-00003", to: "dave")
        // product_mismatch and quantity_mismatch.
        try world.play("GPA.0000-0000-0000-00004", product: "coin4886", binding: "erin")
        try world.playUpload(by: "erin", carrying: "GPA.0000-0000-0000-00004", binding: "erin")
        try world.deliver("GPA.0000-0000-0000-00004", to: "erin", product: "coin42")
        try world.play("GPA.0000-0000-0000-00005", quantity: 3, binding: "frank")
        try world.playUpload(by: "frank", carrying: "GPA.0000-0000-0000-00005", binding: "frank")
        try world.deliver("GPA.0000-0000-0000-00005", to: "frank", quantity: 1)
        // refunded_delivery: voided by Google, still credited.
        try world.play("GPA.0000-0000-0000-00006", binding: "gina", voided: true)
        try world.playUpload(by: "gina", carrying: "GPA.0000-0000-0000-00006", binding: "gina")
        try world.deliver("GPA.0000-0000-0000-00006", to: "gina")
        // unverified_delivery: an order id the ledger credited that no Play source holds.
        try world.deliver("GPA.0000-0000-0000-00007", to: "hank")
        // environment_mismatch: a licence tester's purchase credited under production.
        try world.play("GPA.0000-0000-0000-00008", binding: "ivy", test: true)
        try world.playUpload(by: "ivy", carrying: "GPA.0000-0000-0000-00008", binding: "ivy")
        try world.deliver("GPA.0000-0000-0000-00008", to: "ivy")
        // foreign_bundle: a genuine purchase of another Android app.
        try world.playUpload(by: "jack", carrying: nil, package: "com.other.app")
        // shared_receipt: one purchase uploaded by two accounts.
        try world.play("GPA.0000-0000-0000-00009", binding: nil)
        try world.playUpload(by: "kate", carrying: "GPA.0000-0000-0000-00009")
        try world.playUpload(by: "liam", carrying: "GPA.0000-0000-0000-00009")
        try world.deliver("GPA.0000-0000-0000-00009", to: "kate")
        // The Apple twin of missed_delivery.
        try world.apple("2000000000000001")
        try world.upload(by: "alice", claimed: "2000000000000001")

        let (found, fingerprints, _) = try world.storeFindings()
        let foreign = found.first { $0.kind == .foreignBundle }
        #expect(found == [
            play(.missedDelivery, "GPA.0000-0000-0000-00001", "alice"),
            play(.duplicateDelivery, "GPA.0000-0000-0000-00002", "bob"),
            play(.wrongAccount, "GPA.0000-0000-0000-00003", "carol"),
            play(.productMismatch, "GPA.0000-0000-0000-00004", "erin"),
            play(.quantityMismatch, "GPA.0000-0000-0000-00005", "frank"),
            play(.refundedDelivery, "GPA.0000-0000-0000-00006", "gina"),
            play(.unverifiedDelivery, "GPA.0000-0000-0000-00007", "hank"),
            play(.environmentMismatch, "GPA.0000-0000-0000-00008", "ivy"),
            play(.foreignBundle, foreign?.transaction, "jack"),
            play(.sharedReceipt, "GPA.0000-0000-0000-00009", nil),
            .init(kind: .missedDelivery, transaction: "2000000000000001", user: "alice", store: .appStore),
        ])
        // Apple's fingerprints are what they always were; Play's are marked as Play's.
        #expect(fingerprints.filter { !$0.hasPrefix("google_play/") } == ["missed_delivery:2000000000000001"])
        #expect(fingerprints.contains("google_play/missed_delivery:GPA.0000-0000-0000-00001"))
    }

    /// A partial refund by quantity (refundableQuantity below quantity, or voidedQuantity): the
    /// refunded units still credited are a refunded_delivery of those units only.
    @Test func partialRefundTakesTheRefundedUnits() throws {
        let world = try RuleWorld("play_partial")
        try world.play("GPA.1111-0000-0000-00001", quantity: 3, binding: "alice", refundedUnits: 1)
        try world.playUpload(by: "alice", carrying: "GPA.1111-0000-0000-00001", binding: "alice")
        try world.deliver("GPA.1111-0000-0000-00001", to: "alice", quantity: 3)
        let judged = try world.storeFindings()
        #expect(judged.found == [play(.refundedDelivery, "GPA.1111-0000-0000-00001", "alice")])
        #expect(judged.revokedUnits == ["GPA.1111-0000-0000-00001": 1])
    }

    /// Never flagged: a pending purchase (not paid yet) whether credited or not; a renewal whose
    /// own order id was credited; Play's ledger rows while Play is off; a purchase whose signed
    /// binding is the credited account's hash.
    @Test func neverFlaggedOnPlay() throws {
        let world = try RuleWorld("play_never")
        try world.play("GPA.2222-0000-0000-00001", binding: "alice", pending: true)
        try world.playUpload(by: "alice", carrying: "GPA.2222-0000-0000-00001", binding: "alice")
        try world.play("GPA.2222-0000-0000-00002", binding: "bob", pending: true)
        try world.playUpload(by: "bob", carrying: "GPA.2222-0000-0000-00002", binding: "bob")
        try world.deliver("GPA.2222-0000-0000-00002", to: "bob")
        try world.play("GPA.2222-0000-0000-00003..0", binding: "carol", token: "sub-token")
        try world.playUpload(by: "carol", carrying: "GPA.2222-0000-0000-00003..0", binding: "carol")
        try world.deliver("GPA.2222-0000-0000-00003..0", to: "carol")
        let daveHash = try world.connection.query("SELECT reconcile.account_hash('dave')")[0].decode(String.self, at: 0)
        try world.play("GPA.2222-0000-0000-00004", binding: daveHash)
        try world.playUpload(by: "dave", carrying: "GPA.2222-0000-0000-00004", binding: daveHash)
        try world.deliver("GPA.2222-0000-0000-00004", to: "dave")
        #expect(try world.storeFindings().found == [])

        // With Play off, its ledger rows and purchases are not judged at all.
        let off = try RuleWorld("play_off")
        try off.deliver("GPA.3333-0000-0000-00001", to: "erin")
        try off.play("GPA.3333-0000-0000-00002", binding: "frank")
        try off.playUpload(by: "frank", carrying: "GPA.3333-0000-0000-00002", binding: "frank")
        #expect(try off.storeFindings(packages: []).found == [])
    }

    /// A Play package named like the iOS bundle is not accepted by RECONCILE_BUNDLE_IDS alone: each
    /// store's apps come from its own setting.
    @Test func eachStoreAcceptsItsOwnApps() throws {
        let world = try RuleWorld("play_apps")
        try world.play("GPA.4444-0000-0000-00001", package: RuleWorld.bundle, binding: "alice")
        try world.playUpload(by: "alice", carrying: "GPA.4444-0000-0000-00001", binding: "alice", package: RuleWorld.bundle)
        let found = try world.storeFindings().found
        #expect(found.map(\.kind) == [.foreignBundle])
        #expect(found.first?.store == .googlePlay)
    }

    /// With a Play service account, a Play unverified_delivery waits for the Orders API's answer
    /// (`PlayOrderLookups` asks it): Play's deliveries wait for their API as Apple's do for theirs.
    @Test func aServiceAccountMakesPlaysUnverifiedDeliveriesWaitForTheOrdersAPI() throws {
        let settings = try Settings(lookup: [
            "RECONCILE_BUNDLE_IDS": RuleWorld.bundle, "GOOGLE_PLAY_PACKAGE_NAMES": RuleWorld.package,
            "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": "/nonexistent/key.json",
        ].lookup)
        let parameters = Differ.Parameters(settings: settings, runID: 1, judgeBefore: Date(), scope: .transactions([]))
        #expect(parameters.storesOn == [.appStore, .googlePlay])
        #expect(parameters.apiStores == [.googlePlay])
    }

    /// The SQL's kind → store mapping is Swift's.
    @Test func uploadKindsMapToTheirStoreInSQLAsInSwift() throws {
        let world = try RuleWorld("play_kind_store")
        for kind in Store.allCases.flatMap(\.uploadKinds) + ["something_else"] {
            let sql = try world.connection.query("SELECT reconcile.upload_store($1)", [kind.rawValue])[0].decode(Store.self, at: 0)
            #expect(sql == (Store(uploadKind: kind) ?? .appStore), "\(kind)")
        }
        #expect(Store(ledgerTransactionID: "GPA.1234-5678-9012-34567") == .googlePlay)
        #expect(Store(ledgerTransactionID: "2000000123456789") == .appStore)
        for (id, store) in [("GPA.1234-5678-9012-34567", "google_play"), ("2000000123456789", "app_store")] {
            let sql = try world.connection.query("SELECT reconcile.ledger_store(NULL, $1)", [id])[0].decode(String.self, at: 0)
            #expect(sql == store)
        }
    }
}
