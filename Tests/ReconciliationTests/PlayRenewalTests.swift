import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Google Play subscriptions' renewals (SPEC section 18: each renewal an order of its own): Google
/// charges them in the background, and a renewal nobody uploaded and nobody credited is a leak
/// only subscriptionsv2's latest order names. A run asks again about each subscription whose
/// period has ended, stores every order up to the latest, dated by Google's order, and asks no
/// more about one that is over.
@Suite("Scenario: Google Play subscription renewals nobody uploaded")
struct PlayRenewalTests {
    static let day: TimeInterval = 86_400

    @Test func aSubscriptionsOrdersRunFromItsFirstToItsLatest() {
        #expect(PlaySubscriptionOrders.orderIDs(upTo: "GPA.1234-5678-9012-34567..2") == [
            "GPA.1234-5678-9012-34567", "GPA.1234-5678-9012-34567..0", "GPA.1234-5678-9012-34567..1",
            "GPA.1234-5678-9012-34567..2",
        ])
        #expect(PlaySubscriptionOrders.orderIDs(upTo: "GPA.1234-5678-9012-34567") == ["GPA.1234-5678-9012-34567"])
        #expect(PlaySubscriptionOrders.orderIDs(upTo: "GPA.1234-5678-9012-34567..0") == [
            "GPA.1234-5678-9012-34567", "GPA.1234-5678-9012-34567..0",
        ])
        // Not a renewal's suffix: only the id itself.
        #expect(PlaySubscriptionOrders.orderIDs(upTo: "GPA.1..x") == ["GPA.1..x"])
        #expect(PlaySubscriptionOrders.orderIDs(upTo: "GPA.1..99999") == ["GPA.1..99999"])
    }

    @Test func aRenewalNobodyUploadedOrCreditedIsFoundAndAnOverSubscriptionIsNotAskedAgain() async throws {
        let world = try PlayOrderLookupTests.world("play_renewals")
        try world.connection.executeScript(
            "INSERT INTO reconcile.products VALUES ('vip_month', 'auto_renewable', 30000, 'CNY');")
        let sim = world.sim.play
        let bought = Date().addingTimeInterval(-4 * Self.day)
        func millis(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
        // Renewed twice, then over: its last period ended a day ago.
        var request = PlayPurchaseRequest(
            productId: "vip_month", kind: .subscription, obfuscatedAccountId: "alice", acknowledged: true,
            purchaseTimeMillis: millis(bought))
        request.expiryTimeMillis = millis(bought.addingTimeInterval(Self.day))
        let renewed = try sim.createPurchase(request)
        _ = try sim.renewSubscription(renewed.purchaseToken, expiryTimeMillis: millis(bought.addingTimeInterval(2 * Self.day)))
        _ = try sim.renewSubscription(renewed.purchaseToken, expiryTimeMillis: millis(bought.addingTimeInterval(3 * Self.day)))
        // Bought an hour ago, its period a month long.
        let active = try sim.createPurchase(.init(
            productId: "vip_month", kind: .subscription, obfuscatedAccountId: "bob", acknowledged: true,
            purchaseTimeMillis: millis(Date().addingTimeInterval(-3600))))
        let first = try #require(renewed.orderId)
        for (user, purchase) in [("alice", renewed), ("bob", active)] {
            let payload = String(decoding: try JSONSerialization.data(
                withJSONObject: ["purchaseData": purchase.purchaseData, "signature": purchase.signature],
                options: [.sortedKeys]), as: UTF8.self)
            try world.connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'play_purchase', $2, $3, $4)
                """, [user, payload, purchase.orderId, bought])
        }
        // The app credited the first order and the first renewal, never the second.
        for (order, user) in [(first, "alice"), ("\(first)..0", "alice"), (try #require(active.orderId), "bob")] {
            try world.connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                VALUES ($1, $2, 'vip_month', 1, $3)
                """, [order, user, bought])
        }
        try await world.sim.withRunning { running in
            let settings = try await PlayOrderLookupTests.settings(world, running)
            let report = try await Stores.withJob(settings: settings, logger: PlayOrderLookupTests.quiet) {
                try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
            }
            #expect(report.status == .completed)
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-") \($0.userID ?? "-")" }
                == ["missed_delivery \(first)..1 alice"])
            #expect(report.play?.subscriptionsAsked == 2)
            // The credited renewal came by the Orders API (the ledger's order id); the other by the
            // subscription's latest order.
            #expect(report.play?.ordersAsked == 1)
            #expect(report.play?.renewalOrdersStored == 1)
            // The renewals are dated by Google's orders: each from the end of the period before.
            let rows = try world.connection.query(
                """
                SELECT transaction_id, original_transaction_id, source, purchase_date
                  FROM reconcile.apple_transactions WHERE purchase_token = $1 ORDER BY transaction_id
                """, [renewed.purchaseToken]
            ).map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1)) \(try $0.decode(String.self, at: 2))"
                + " \(Int(((try $0.decode(Date.self, at: 3)).timeIntervalSince(bought) / Self.day).rounded()))" }
            #expect(rows == [
                "\(first) \(first) play_api 0", "\(first)..0 \(first) play_api 1", "\(first)..1 \(first) play_api 2",
            ])
            let kept = try world.connection.query(
                "SELECT purchase_token, latest_order_id, ended FROM reconcile.play_subscriptions ORDER BY latest_order_id"
            ).map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String?.self, at: 1) ?? "-") \(try $0.decode(Bool.self, at: 2))" }
            #expect(kept.sorted() == [
                "\(renewed.purchaseToken) \(first)..1 true", "\(active.purchaseToken) \(active.orderId ?? "-") false",
            ].sorted())
            let asked = sim.stats.requestsByEndpoint["subscriptionsv2"] ?? 0

            // The next run: one subscription over, the other's period not ended: Google is not asked.
            let again = try await Stores.withJob(settings: settings, logger: PlayOrderLookupTests.quiet) {
                try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
            }
            #expect(again.play?.subscriptionsAsked == 0)
            #expect(sim.stats.requestsByEndpoint["subscriptionsv2"] == asked)
            #expect(try again.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-")" } == [
                "missed_delivery \(first)..1",
            ])
        }
    }
}
