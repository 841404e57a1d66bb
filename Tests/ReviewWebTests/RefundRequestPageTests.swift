import AppStore
import AppStoreSimulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// The item page and the customer page show what was answered to Apple about a refund request
/// and what Apple decided (issue 16 item 3, SPEC section 14): a consenting account's fully used
/// pack, a `CONSUMPTION_REQUEST` answered against the simulator, then `REFUND_DECLINED`.
@Suite("Refund requests on the review pages")
struct RefundRequestPageTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Apple's reason for refusing an earlier answer: data that tries to run script in the pages.
    static let hostileError = "<script>alert(3)</script>"

    @Test func theAnswerAndApplesDecisionAreShownInBothLanguages() async throws {
        let (database, connection) = try TestDatabase.migrated("refund_pages")
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        var simLogger = Logger(label: "sim")
        simLogger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(stateDirectory: state, logger: simLogger))
        let pack = try sim.createTransaction(SimulatedTransaction(
            productId: "coins3", customer: "amy-apple-id", bundleId: "com.hncs.szj", environment: .production,
            type: .consumable, quantity: 3, purchaseDate: Date().addingTimeInterval(-86_400), price: 90_000,
            currency: "CNY"))
        let transaction = pack.transactionId
        try connection.plantSignedTransactionUpload(
            pack.signedTransaction, claiming: transaction, by: "amy", age: "20 hours")
        try connection.plantDelivery(
            transaction, to: "amy", product: "coins3", quantity: 3, consumedMilli: 100_000, age: "20 hours")
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        // An earlier answer Apple refused (a 400), with its words: shown as data, escaped.
        try connection.execute(
            """
            INSERT INTO reconcile.consumption_answers
                (transaction_id, environment, user_id, request_uuids, requested_at, status, body, apple_http_status,
                 apple_error, created_at)
            VALUES ($1, 'Production', 'amy', ARRAY[gen_random_uuid()], now() - interval '3 days', 'failed',
                    '{"deliveryStatus": "DELIVERED"}', 400, $2, now() - interval '3 days')
            """, [transaction, Self.hostileError])
        // A review item about the purchase, as a run would have opened it.
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment, status) VALUES (now(), 'production', 'completed') RETURNING id"
        )[0].decode(Int64.self, at: 0)
        let item = try connection.query(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
                 suggested_action, evidence, first_seen_run, last_seen_run)
            VALUES ('quantity_mismatch:' || $1, 'quantity_mismatch', 'medium', 'open', $1, $1, 'amy', 'coins3',
                    'investigate', '{"apple_transaction": null, "deliveries": [], "uploads": [], "buyer": null}', $2, $2)
            RETURNING id
            """, [transaction, run]
        )[0].decode(Int64.self, at: 0)

        let settings = try await sim.withRunning { running in
            let values = running.jobEnvironment.merging([
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            ]) { $1 }
            var settings = try Settings(lookup: { values[$0] })
            settings.consumption.enabled = true
            settings.consumption.refundPreference = .ledger
            // Apple asks; the hourly sync answers from the ledger; Apple declines the refund.
            _ = try sim.signNotification(type: .consumptionRequest, transactionId: transaction)
            try await Self.sync(settings, on: connection)
            #expect(sim.notifications.consumptionAnswers.map(\.transactionId) == [transaction])
            _ = try sim.signNotification(type: .refundDeclined, transactionId: transaction)
            try await Self.sync(settings, on: connection)
            return settings
        }
        let outcomes = try connection.query(
            "SELECT status || ' ' || coalesce(outcome, '-') FROM reconcile.consumption_answers ORDER BY id"
        ).map { try $0.decode(String.self, at: 0) }
        // Apple's decision is about the purchase: every answer about it records it.
        #expect(outcomes == ["failed declined", "answered declined"])

        var configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored)
        configuration.maximumConnections = 1
        configuration.deskSettings = settings
        let application = try buildApplication(configuration: configuration)
        try await application.test(.router) { client in
            let cookie = try await ReviewWebTests.login(client)
            for page in ["/items/\(item)", "/desk?q=\(transaction)"] {
                let english = try await LanguageTests.get(client, page, cookie: cookie, language: "en")
                let answered = try #require(Self.row(english, status: "answered"), "\(page)")
                #expect(answered.contains("<td>Sent</td>"), "\(page)")
                #expect(answered.contains("<td>Delivered</td><td>100%</td><td>Decline the refund</td>"), "\(page)")
                #expect(answered.contains("Refund declined "), "\(page)")
                let failed = try #require(Self.row(english, status: "failed"), "\(page)")
                #expect(failed.contains("Failed: Apple refused the answer (&lt;script&gt;alert(3)&lt;/script&gt;)"))
                #expect(failed.contains("<td>None given</td>") && failed.contains("Refund declined "))
                #expect(!english.contains(Self.hostileError), "\(page)")
                #expect(english.contains("Refund requests: what we answered Apple"), "\(page)")

                let chinese = try await LanguageTests.get(client, page, cookie: cookie, language: "zh-Hans")
                let answeredZh = try #require(Self.row(chinese, status: "answered"), "\(page)")
                #expect(answeredZh.contains("<td>已发送</td>"), "\(page)")
                #expect(answeredZh.contains("<td>已发放</td><td>100%</td><td>拒绝退款</td>"), "\(page)")
                #expect(answeredZh.contains("已拒绝退款（"), "\(page)")
                #expect(chinese.contains("退款请求：我们给苹果的答复"), "\(page)")
                #expect(!chinese.contains("Refund declined") && !chinese.contains("Decline the refund"), "\(page)")
                #expect(!chinese.contains(Self.hostileError), "\(page)")
            }
        }
    }

    /// The table row of the answer with this status.
    static func row(_ page: String, status: String) -> String? {
        guard let start = page.range(of: "<tr class=\"answer-\(status)\">") else { return nil }
        return String(page[start.lowerBound...].prefix { $0 != "\n" }.split(separator: "</tr>").first ?? "")
    }

    /// `reconcile notifications sync` as the command runs it.
    static func sync(_ settings: Settings, on connection: Connection) async throws {
        try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: quiet) { verifier, api in
            let sync = try #require(api).notificationSync(NotificationApplier(verify: verifier.verifyNotification))
            _ = try await sync.sync(since: nil, on: connection)
        }
    }
}
