import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import Reconciliation
import ReviewWeb
import TestSupport
import Testing

/// Issue 38 item 6 (SPEC section 18) on the pages: the queue shows each item's store and filters
/// by it, the export follows the filter, and a Google Play item's page names the store and calls
/// its transaction Google's order id, in both languages.
@Suite("Review pages: the store of each item")
struct StoreWebTests {
    let database: TestDatabase
    let connection: Connection
    let ids: [String: Int64]
    let play: Int64

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewstoreweb")
        ids = try ReviewFixtures.seed(on: connection)
        play = try ReviewFixtures.seedPlay(on: connection)
    }

    func withApp(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = try buildApplication(configuration: ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored))
        try await application.test(.router) { client in try await test(client) }
    }

    @Test func theQueueShowsEachStoreAndFiltersByIt() async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let queue = try await ReviewWebTests.page(client, "/", cookie: cookie)
            #expect(queue.contains("<th>Store</th>"))
            #expect(queue.contains(">Google Play</td>") && queue.contains(">App Store</td>"))
            #expect(queue.contains("<select name=\"store\"><option value=\"\">Any store</option>"))
            #expect(queue.contains("<option value=\"google_play\" >Google Play</option>"), "\(queue)")
            #expect(queue.contains(ReviewFixtures.playOrder) && queue.contains("t-m1"))

            let play = try await ReviewWebTests.page(client, "/?store=google_play", cookie: cookie)
            #expect(play.contains(ReviewFixtures.playOrder))
            #expect(!play.contains("<code>t-m1</code>") && !play.contains(">App Store</td>"))
            #expect(play.contains("<option value=\"google_play\" selected>Google Play</option>"))
            // The selection form carries the store on to the bulk decision, and the export link too.
            #expect(play.contains("<input type=\"hidden\" name=\"store\" value=\"google_play\">"))
            #expect(play.contains("/export.csv?status=active&amp;store=google_play")
                || play.contains("/export.csv?store=google_play"), "\(play)")

            let apple = try await ReviewWebTests.page(client, "/?store=app_store", cookie: cookie)
            #expect(!apple.contains(ReviewFixtures.playOrder) && apple.contains("<code>t-m1</code>"))
            // A store this build does not know filters nothing, as a stale bookmark should.
            let unknown = try await ReviewWebTests.page(client, "/?store=app_gallery", cookie: cookie)
            #expect(unknown.contains(ReviewFixtures.playOrder) && unknown.contains("<code>t-m1</code>"))

            let csv = String(buffer: try await ReviewWebTests.get(client, "/export.csv?store=google_play", cookie: cookie).body)
            let lines = csv.split(separator: "\r\n")
            #expect(lines.count == 2 && lines[0].hasSuffix(",store") && lines[1].hasSuffix(",google_play"), "\(csv)")
        }
    }

    @Test func aPlayItemsPageNamesTheStoreAndGooglesOrderID() async throws {
        let apple = try #require(ids["t-m1"])
        let play = self.play
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let page = try await ReviewWebTests.page(client, "/items/\(play)", cookie: cookie)
            #expect(page.contains("<dt>Store</dt><dd id=\"store\">Google Play</dd>"), "\(page)")
            #expect(page.contains("<dt>Google order id</dt><dd><code id=\"transaction-id\">\(ReviewFixtures.playOrder)</code>"))
            #expect(page.contains("<dt>Original order id</dt>"))
            #expect(page.contains("<h2>Google Play order</h2>") && !page.contains("Apple transaction"))

            let applePage = try await ReviewWebTests.page(client, "/items/\(apple)", cookie: cookie)
            #expect(applePage.contains("<dt>Store</dt><dd id=\"store\">App Store</dd>"))
            #expect(applePage.contains("<dt>Transaction</dt><dd><code id=\"transaction-id\">t-m1</code>"))
            #expect(!applePage.contains("Google order id") && applePage.contains("<h2>Apple transaction</h2>"))
        }
    }

    @Test func theStoreReadsInChineseToo() async throws {
        let play = self.play
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let item = try await LanguageTests.get(client, "/items/\(play)", cookie: cookie, language: "zh-CN")
            #expect(item.contains("<html lang=\"zh-Hans\">"))
            #expect(item.contains("<dt>商店</dt><dd id=\"store\">Google Play</dd>"), "\(item)")
            #expect(item.contains("<dt>Google 订单号</dt>"))
            #expect(item.contains("<dt>原始订单号</dt>"))
            #expect(item.contains("<h2>Google Play 订单记录</h2>"))
            #expect(!item.contains("Google order id"))
            let queue = try await LanguageTests.get(client, "/?store=google_play", cookie: cookie, language: "zh-CN")
            #expect(queue.contains("<th>商店</th>"))
            #expect(queue.contains("<option value=\"\">全部商店</option>"))
            #expect(queue.contains("<option value=\"google_play\" selected>Google Play</option>"))
            #expect(!queue.contains("Any store"))
        }
    }
}
