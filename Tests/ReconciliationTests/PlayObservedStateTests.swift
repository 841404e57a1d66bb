import Foundation
import GooglePlay
@testable import Reconciliation
import Testing

/// What a Developer API answer makes of a purchase's white row (SPEC section 18: a pending
/// purchase is never judged until it is paid; a purchase Google cancelled is revoked).
@Suite("Play API states") struct PlayObservedStateTests {
    static func subscription(_ state: String) throws -> SubscriptionPurchaseV2 {
        let json = """
            {"kind": "androidpublisher#subscriptionPurchaseV2", "subscriptionState": "\(state)",
             "latestOrderId": "GPA.3312-5678-9012-34567", "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
             "lineItems": [{"productId": "vip_month", "expiryTime": "2026-12-31T00:00:00Z"}]}
            """
        return try JSONDecoder().decode(SubscriptionPurchaseV2.self, from: Data(json.utf8))
    }

    static func applied(_ state: String) throws -> AppleTransactionRecord {
        let observed = PlayObservedState(try subscription(state), at: Date(timeIntervalSince1970: 1_800_000_000))
        var record = AppleTransactionRecord(
            transactionID: "GPA.3312-5678-9012-34567", originalTransactionID: "GPA.3312-5678-9012-34567",
            productID: "vip_month", productType: "auto_renewable", bundleID: "com.example.coins.android",
            environment: .production, quantity: 1, purchaseDate: Date(timeIntervalSince1970: 1_799_000_000),
            signedDate: Date(timeIntervalSince1970: 1_799_000_000), source: .playPurchase)
        record.apply(observed)
        return record
    }

    @Test func aSubscriptionWhosePendingPaymentWasCancelledIsRevokedNotPaid() throws {
        let record = try Self.applied("SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED")
        #expect(!record.pending)
        #expect(record.revocationDate == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(record.refundedQuantity == nil, "revoked whole")
    }

    @Test(arguments: [
        ("SUBSCRIPTION_STATE_PENDING", true), ("SUBSCRIPTION_STATE_ACTIVE", false),
        ("SUBSCRIPTION_STATE_CANCELED", false), ("SUBSCRIPTION_STATE_EXPIRED", false),
        ("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", false), ("SUBSCRIPTION_STATE_ON_HOLD", false),
    ])
    func otherSubscriptionStatesAreNotRevoked(_ state: String, pending: Bool) throws {
        let record = try Self.applied(state)
        #expect(record.pending == pending)
        #expect(record.revocationDate == nil, "\(state): a renewal's refund comes by the voided list, not the state")
    }
}

/// Section 18's settings together: none of these stops a command (the spec makes none an error).
@Suite("Play settings") struct PlaySettingsTests {
    static func settings(_ values: [String: String]) throws -> Settings {
        var all = ["DATABASE_URL": "postgres://x@localhost/x"]
        all.merge(values) { $1 }
        return try Settings(lookup: all.lookup)
    }

    @Test func aShortPushTokenIsTheOperatorsChoice() throws {
        let settings = try Self.settings(["GOOGLE_PLAY_PACKAGE_NAMES": "com.x", "RECONCILE_PLAY_PUSH_TOKEN": "rtdn"])
        #expect(settings.googlePlay.pushToken?.value == "rtdn")
    }

    @Test func acknowledgingWithoutAServiceAccountIsAccepted() throws {
        let settings = try Self.settings(["GOOGLE_PLAY_PACKAGE_NAMES": "com.x", "RECONCILE_PLAY_ACKNOWLEDGE": "on"])
        #expect(settings.googlePlay.acknowledge && settings.googlePlay.serviceAccountFile == nil)
    }

    @Test func packagesWithoutKeysOrKeysWithoutPackages() throws {
        #expect(try Self.settings(["GOOGLE_PLAY_PACKAGE_NAMES": "com.x"]).googlePlay.enabled)
        let keysAlone = try Self.settings(["RECONCILE_BUNDLE_IDS": "com.y", "GOOGLE_PLAY_LICENSE_KEYS": "com.x=AAAA"])
        #expect(!keysAlone.googlePlay.enabled)
    }

    /// A Play-only job (no RECONCILE_BUNDLE_IDS) names an app, so `reconcile serve` keeps the desk
    /// and the Insights segments on, and decisions are judged again, as for Apple.
    @Test func aPlayOnlyJobNamesAnApp() throws {
        #expect(try Self.settings(["GOOGLE_PLAY_PACKAGE_NAMES": "com.x"]).namesAnApp)
        #expect(try Self.settings(["RECONCILE_BUNDLE_IDS": "com.y"]).namesAnApp)
    }
}
