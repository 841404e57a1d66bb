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

/// The customer page for a Google Play order id typed in the search box (SPEC section 18, "Desk"):
/// asked of the simulator's Orders API, shown with its ledger row and verdict, in both languages.
@Suite("Support desk pages: Google Play orders")
struct PlayDeskWebTests {
    static let package = "com.hncs.szj.android"
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func aPlayOrderIsLookedUpFromTheSearchBox() async throws {
        let (database, connection) = try TestDatabase.migrated("desk_web_play")
        try ReviewFixtures.seed(on: connection)
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var simLogger = Logger(label: "sim")
        simLogger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(
            stateDirectory: state, logger: simLogger, playPackageNames: [Self.package]))
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let refunded = try sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "desk-play-1", acknowledged: true,
            purchaseTimeMillis: Int64(bought.timeIntervalSince1970 * 1000)))
        _ = try sim.play.voidPurchase(refunded.purchaseToken)
        let order = try #require(refunded.orderId)
        try connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ($1, 'desk-play-1', 'coin42', 1, $2)
            """, [order, bought])
        let unknown = "GPA.9999-0000-0000-00041"
        try await sim.withRunning { running in
            let play = try await running.playSettings()
            let values = play.jobEnvironment.merging([
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.example.game",
                "RECONCILE_RECEIPT_VERIFICATION": "local",
            ]) { $1 }
            let settings = try Settings(lookup: { values[$0] })
            try await GooglePlayServices.withServices(settings: settings, logger: Self.quiet) { services in
                var configuration = ReviewWebConfiguration(
                    host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token),
                    judgement: .asStored)
                configuration.maximumConnections = 1
                configuration.deskSettings = settings
                configuration.deskPlay = services
                let application = try buildApplication(configuration: configuration)
                try await application.test(.router) { client in
                    let cookie = try await ReviewWebTests.login(client)
                    let page = try await ReviewWebTests.page(client, "/desk?q=\(order.lowercased())", cookie: cookie)
                    #expect(page.contains("id=\"tx-\(order)\""), "\(page)")
                    #expect(page.contains(">Refunded delivery</span>"), "\(page)")
                    #expect(page.contains("<dd>Google Play</dd>"))
                    #expect(page.contains("Google Play Developer API"))
                    #expect(page.contains("<td>desk-play-1</td>"))
                    #expect(page.contains("Asked: the job&#39;s records, Google&#39;s Orders API, Google&#39;s purchase state.")
                        || page.contains("Asked: the job's records, Google's Orders API, Google's purchase state."), "\(page)")
                    #expect(page.contains("id=\"desk-enqueue\""))

                    let invalid = try await ReviewWebTests.page(client, "/desk?q=\(unknown)", cookie: cookie)
                    #expect(invalid.contains("is not an order of this app"), "\(invalid)")

                    let chinese = try await LanguageTests.get(
                        client, "/desk?q=\(order)&lang=zh-Hans", cookie: cookie, language: "zh-CN")
                    // Held since the first lookup, and asked again (the truth of the moment).
                    #expect(chinese.contains("已查询：本系统的记录"), "\(chinese)")
                    #expect(chinese.contains("Google 订单接口"), "\(chinese)")

                    let account = try await ReviewWebTests.page(client, "/desk?q=desk-play-1&kind=user&lang=en", cookie: cookie)
                    #expect(account.contains("Google Play keeps no purchase history by account"), "\(account)")
                }
            }
        }
    }
}
