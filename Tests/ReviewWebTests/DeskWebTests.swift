import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// The support desk in the browser (issue 15 item 2): the search box on every page, the customer
/// page with `reconcile lookup`'s content, and the button that opens review items, against a real
/// database.
@Suite("Support desk pages")
struct DeskWebTests {
    /// A ledger row two days old whose transaction no verified source knows: the nightly run's
    /// rules call it an unverified delivery.
    static let user = "desk-u1"
    static let transaction = "9100000001"

    let database: TestDatabase
    let connection: Connection

    init() throws {
        (database, connection) = try TestDatabase.migrated("deskweb")
        try ReviewFixtures.seed(on: connection)
        try connection.plantDelivery(Self.transaction, to: Self.user, product: "coin42", age: "2 days")
    }

    func withApp(desk: Bool = true, _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void)
        async throws
    {
        var configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored)
        // One connection: every lookup of a test runs on the same one, after the ones before it.
        configuration.maximumConnections = 1
        if desk {
            let values = ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.example.game"]
            configuration.deskSettings = try Settings(lookup: { values[$0] })
        }
        let application = try buildApplication(configuration: configuration)
        try await application.test(.router) { client in try await test(client) }
    }

    /// The review items about a transaction, read on a connection of its own (the tests' closures
    /// are `@Sendable`, a connection is not).
    static func items(for transaction: String, in url: String) throws -> [Int64] {
        try Connection(url: url).query(
            "SELECT id FROM reconcile.review_items WHERE transaction_id = $1 ORDER BY id", [transaction]
        ).map { try $0.decode(Int64.self, at: 0) }
    }

    @Test func theSearchBoxIsOnTheQueuePage() async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let queue = try await ReviewWebTests.page(client, "/", cookie: cookie)
            #expect(queue.contains("<form method=\"get\" action=\"/desk\" class=\"search\" role=\"search\">"))
            #expect(queue.contains("<input type=\"search\" name=\"q\""))
        }
    }

    @Test func aUsersPageShowsTheirTransactionAndItsVerdict() async throws {
        let url = database.url
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let page = try await ReviewWebTests.page(client, "/desk?q=\(Self.user)", cookie: cookie)
            #expect(page.contains("id=\"tx-\(Self.transaction)\""))
            #expect(page.contains(">Unverified delivery</span>"))
            #expect(page.contains("Account desk-u1: 1 transaction(s)."))
            #expect(page.contains("<td>coin42</td>"))
            #expect(page.contains("id=\"desk-enqueue\""))
            // Nothing enqueued by looking.
            #expect(try Self.items(for: Self.transaction, in: url).isEmpty)
        }
    }

    @Test func theEnqueueButtonCreatesExactlyOneItem() async throws {
        let url = database.url
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
            for _ in 0..<2 {
                let response = try await ReviewWebTests.post(
                    client, "/desk/enqueue", cookie: cookie, [("csrf_token", csrf), ("q", Self.user)])
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/desk?q=\(Self.user)&kind=user")
            }
            let ids = try Self.items(for: Self.transaction, in: url)
            #expect(ids.count == 1)
            let id = try #require(ids.first)
            let page = try await ReviewWebTests.page(client, "/desk?q=\(Self.user)", cookie: cookie)
            #expect(page.contains("<a href=\"/items/\(id)\">#\(id) · Unverified delivery</a>"))
            // And the item links back to its customer's page.
            let item = try await ReviewWebTests.page(client, "/items/\(id)", cookie: cookie)
            #expect(item.contains("href=\"/desk?q=\(Self.user)&amp;kind=user\""))
        }
    }

    /// Issue 24 item 13: the items the desk's button opens are recorded as opened by the person
    /// who pressed it, not by the job.
    @Test func theEnqueueButtonRecordsWhoPressedIt() async throws {
        let url = database.url
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client, name: "mei")
            let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
            let response = try await ReviewWebTests.post(
                client, "/desk/enqueue", cookie: cookie, [("csrf_token", csrf), ("q", Self.user), ("kind", "user")])
            #expect(response.status == .seeOther)
            let actors = try Connection(url: url).query(
                """
                SELECT e.actor FROM reconcile.review_events e JOIN reconcile.review_items i ON i.id = e.review_item_id
                 WHERE i.transaction_id = $1
                """, [Self.transaction]
            ).map { try $0.decode(String.self, at: 0) }
            #expect(actors == ["mei"])
        }
    }

    /// Issue 24 item 11: an account id made of digits is an account, not a transaction id: the
    /// item page's link to its customer names the kind, and the page it opens is the account's.
    @Test func aNumericAccountIdOpensTheAccountsPage() async throws {
        let account = "9100000001"  // the same digits as another customer's transaction
        try connection.plantDelivery("9100000077", to: account, product: "coin42", age: "2 days")
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment, status) VALUES (now(), 'production', 'completed') RETURNING id"
        )[0].decode(Int64.self, at: 0)
        let item = try connection.query(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, status, transaction_id, user_id, product_id, suggested_action, evidence,
                 first_seen_run, last_seen_run)
            VALUES ('unverified_delivery:9100000077', 'unverified_delivery', 'medium', 'open', '9100000077', $1,
                    'coin42', 'investigate', '{"apple_transaction": null, "deliveries": [], "uploads": [], "buyer": null}',
                    $2, $2)
            RETURNING id
            """, [account, run]
        )[0].decode(Int64.self, at: 0)
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let page = try await ReviewWebTests.page(client, "/items/\(item)", cookie: cookie)
            #expect(page.contains("href=\"/desk?q=\(account)&amp;kind=user\""))
            let desk = String(
                buffer: try await ReviewWebTests.get(client, "/desk?q=\(account)&kind=user", cookie: cookie).body)
            #expect(desk.contains("id=\"tx-9100000077\""), "the account's own purchase")
            #expect(!desk.contains("id=\"tx-9100000001\""), "not the transaction with the same digits")
        }
    }

    /// A customer with more purchases than a page holds is shown a page at a time, the finding
    /// first though it is the newest; page numbers are bounded like the queue's.
    @Test func aCustomerWithManyPurchasesIsPagedFindingsFirst() async throws {
        let many = "desk-many"
        try connection.execute(
            """
            WITH ids AS (SELECT n, (9200000000 + n)::text AS id FROM generate_series(1, 60) n),
            uploads AS (
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                SELECT $1, 'signed_transaction', 'seeded', id, now() - interval '3 days' + n * interval '1 minute'
                  FROM ids RETURNING id AS upload_id, claimed_transaction_id AS transaction_id
            ), verified AS (
                INSERT INTO reconcile.upload_verifications (upload_id, state, method, environment, bundle_id)
                SELECT upload_id, 'verified', 'jws', 'Production', 'com.example.game' FROM uploads
            ), claims AS (
                INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source)
                SELECT transaction_id, upload_id, $1, 'jws' FROM uploads
            ), deliveries AS (
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, delivered_at)
                SELECT id, $1, 'coin42', now() - interval '3 days' + n * interval '1 minute' FROM ids
            )
            INSERT INTO reconcile.apple_transactions
                (transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment,
                 quantity, purchase_date, price_milli, currency, source)
            SELECT id, id, 'coin42', 'consumable', 'com.example.game', 'Production', 1,
                   now() - interval '3 days' + n * interval '1 minute', 6000, 'CNY', 'jws'
              FROM ids
            """, [many])
        // The newest: a ledger row whose transaction no verified source knows.
        try connection.plantDelivery("9200000999", to: many, product: "coin42", age: "2 days")
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let first = try await ReviewWebTests.page(client, "/desk?q=\(many)", cookie: cookie)
            #expect(first.contains("Account \(many): 61 transaction(s)."))
            #expect(first.components(separatedBy: "<section class=\"card transaction\"").count - 1
                == DeskPageBuilder.pageSize)
            let finding = try #require(first.range(of: "id=\"tx-9200000999\""))
            let oldest = try #require(first.range(of: "id=\"tx-9200000001\""))
            #expect(finding.lowerBound < oldest.lowerBound, "the finding comes first")
            #expect(first.contains("Page 1 of 2"))
            #expect(first.contains("href=\"/desk?q=\(many)&amp;kind=user&amp;page=2\""))

            let second = String(
                buffer: try await ReviewWebTests.get(client, "/desk?q=\(many)&page=2", cookie: cookie).body)
            #expect(second.components(separatedBy: "<section class=\"card transaction\"").count - 1 == 11)
            #expect(second.contains("id=\"tx-9200000060\""))
            #expect(!second.contains("id=\"tx-9200000999\""))
            // Each page reads the ledger rows and uploads of its own transactions: every card of
            // the second page shows its delivery and its upload, as every card of the first does.
            for page in [first, second] {
                let cards = page.components(separatedBy: "<section class=\"card transaction\"").dropFirst()
                    .filter { !$0.contains("id=\"tx-9200000999\"") }
                #expect(!cards.isEmpty)
                #expect(cards.allSatisfy { !$0.contains("No delivery in the ledger.") && !$0.contains("No upload carried") })
            }

            let huge = try await ReviewWebTests.get(
                client, "/desk?q=\(many)&page=9223372036854775807", cookie: cookie)
            #expect(huge.status == .badRequest)
        }
    }

    @Test func theEnqueueButtonNeedsTheCSRFToken() async throws {
        let url = database.url
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let response = try await ReviewWebTests.post(
                client, "/desk/enqueue", cookie: cookie, [("csrf_token", "wrong"), ("q", Self.user)])
            #expect(response.status == .forbidden)
            #expect(try Self.items(for: Self.transaction, in: url).isEmpty)
        }
    }

    @Test func refusalsAreSaidOnThePage() async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let order = try await ReviewWebTests.page(client, "/desk?q=MK5TTY6V5X", cookie: cookie)
            #expect(order.contains("needs App Store Server API credentials"))
            let nothing = String(buffer: try await ReviewWebTests.get(client, "/desk?q=nobody-here", cookie: cookie).body)
            #expect(nothing.contains("Nothing found for Account nobody-here"))
            let tooLong = try await ReviewWebTests.get(
                client, "/desk?q=" + String(repeating: "x", count: 300), cookie: cookie)
            #expect(tooLong.status == .badRequest)
            #expect(String(buffer: tooLong.body).contains("That is not something to look up"))
        }
        try await withApp(desk: false) { client in
            let cookie = try await ReviewWebTests.login(client)
            let off = try await ReviewWebTests.get(client, "/desk?q=\(Self.user)", cookie: cookie)
            #expect(off.status == .serviceUnavailable)
            #expect(String(buffer: off.body).contains("not set up on this server"))
        }
    }

    @Test func theChinesePageHasNoEnglishCatalogText() async throws {
        let english = Catalog.of(.english)
        let chinese = Catalog.of(.simplifiedChinese)
        // Every English sentence or label the page could show, where Chinese says it otherwise.
        let groups = ["desk.", "kind.", "apple.", "deliveries.", "uploads.", "column.", "nav.", "item.buyer"]
        let labels = english.strings.filter { key, value in
            groups.contains { key.hasPrefix($0) } && !value.contains("{") && value.count > 3
                && chinese.strings[key] != value
        }.map(\.value)
        #expect(labels.count > 20)
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let page = try await LanguageTests.get(
                client, "/desk?q=\(Self.user)&lang=zh-Hans", cookie: cookie, language: "zh-CN")
            #expect(page.contains("<html lang=\"zh-Hans\">"))
            #expect(page.contains("无凭证发货（疑似假单）"))
            #expect(page.contains("玩家账号 desk-u1：共 1 笔交易。"))
            for label in labels + LanguageTests.englishLabels {
                #expect(!page.contains(label), "English left on the customer page: \(label)")
            }
        }
    }
}
