import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Answers to refund requests (SPEC section 14) where the ledger, Apple's decisions or other
/// processes make them harder than the plain case: a non-consumable credited through its restore,
/// a request after Apple decided an earlier one, two processes answering at once, and a
/// subscription Apple asks about before any run saw it.
@Suite("Scenario: answers to refund requests")
struct ConsumptionAnswerTests {
    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A non-consumable bought (T1) while the app was killed; the next day the customer restored
    /// it (StoreKit 1: a new transaction T2 whose original is T1) and the app credited the
    /// restore. SPEC section 5 counts that delivery for T1, and so do the nightly rules; Apple's
    /// refund request names T1 and hears `DELIVERED`, not `UNDELIVERED_OTHER` with `GRANT_FULL`
    /// (the customer refunded and keeping the unlock).
    @Test func aNonConsumableCreditedThroughItsRestoreIsReportedDelivered() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_restore")
        let token = UUID()
        try connection.execute(
            "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1, 'amy')", [token])
        var purchase = SimulatedTransaction(
            productId: "pro_unlock", customer: "amy-id", bundleId: "com.hncs.szj", environment: .production,
            type: .nonConsumable, quantity: 1, purchaseDate: Date().addingTimeInterval(-2 * 86_400),
            appAccountToken: token, price: 30_000, currency: "CNY")
        let bought = try sim.createTransaction(purchase)
        purchase.originalTransactionId = bought.transactionId
        purchase.purchaseDate = Date().addingTimeInterval(-86_400)
        let restored = try sim.createTransaction(purchase)
        try connection.plantSignedTransactionUpload(
            restored.signedTransaction, claiming: restored.transactionId, by: "amy", age: "20 hours")
        try connection.plantDelivery(restored.transactionId, to: "amy", product: "pro_unlock", age: "20 hours")
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        try await sim.withRunning { running in
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            let night = try await RefundRequestTests.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            let findings = try night.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }
            #expect(findings.isEmpty, "the nightly rules count the restore's delivery for the purchase: \(findings)")
            let family = try connection.query(
                "SELECT count(*) FROM reconcile.apple_transactions WHERE original_transaction_id = $1",
                [bought.transactionId])[0].decode(Int.self, at: 0)
            #expect(family == 2, "both the purchase and its restore are in the white table")

            _ = try sim.signNotification(type: .consumptionRequest, transactionId: bought.transactionId)
            _ = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            let body = try #require(sim.notifications.consumptionAnswers.last?.body)
            #expect(
                body.deliveryStatus == "DELIVERED" && body.refundPreference != "GRANT_FULL",
                "Apple was told \(body.deliveryStatus), \(body.refundPreference ?? "no preference")")
        }
    }

    /// A subscription renewal Apple asks about, answered by `reconcile notifications sync` before
    /// any run applied the request's transaction: no upload carried it (renewals happen on Apple's
    /// side) and the optional product catalogue is empty. The request's own signed transaction
    /// says `Auto-Renewable Subscription`: the answer carries no consumptionPercentage (SPEC
    /// section 14).
    @Test func aSubscriptionRequestAnsweredBySyncOmitsTheConsumptionPercentage() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_subscription")
        let token = UUID()
        try connection.execute(
            "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1, 'amy')", [token])
        var renewal = SimulatedTransaction(
            productId: "vip_month", customer: "amy-id", bundleId: "com.hncs.szj", environment: .production,
            type: .autoRenewable, quantity: 1, purchaseDate: Date().addingTimeInterval(-86_400),
            appAccountToken: token, price: 30_000, currency: "CNY")
        renewal.expiresDate = Date().addingTimeInterval(29 * 86_400)
        let renewed = try sim.createTransaction(renewal)
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        _ = try sim.signNotification(type: .consumptionRequest, transactionId: renewed.transactionId)
        try await sim.withRunning { running in
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            _ = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            let body = try #require(sim.notifications.consumptionAnswers.last?.body)
            #expect(
                body.consumptionPercentage == nil,
                "a subscription's answer carried consumptionPercentage \(body.consumptionPercentage.map(String.init) ?? "-")")
        }
    }
}
