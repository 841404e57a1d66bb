import Foundation
import Hummingbird
import Logging
import Postgres
@testable import Reconciliation
import Synchronization
import TestSupport
import Testing

/// Issue 38 item 6 (SPEC section 18): a Google Play item beside the App Store ones carries its
/// store everywhere an item, a finding or an action reaches people and programs (the list, the
/// CSV, the JSON, the outbox and the webhook), and `--store` and a policy's `store` select by it.
@Suite("Stores in the queue: items, filters, exports, the outbox and policies")
struct ReviewStoreTests {
    let database: TestDatabase
    let connection: Connection
    let service: ReviewDecisions
    let queue: ReviewQueue
    let ids: [String: Int64]
    let play: Int64

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewstore")
        ids = try ReviewFixtures.seed(on: connection)
        play = try ReviewFixtures.seedPlay(on: connection)
        service = ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
        queue = ReviewQueue(connection: connection)
    }

    func filter(_ store: Store?, kinds: [FindingKind] = []) -> ReviewFilter {
        var filter = ReviewFilter()
        filter.store = store
        filter.kinds = kinds
        return filter
    }

    // MARK: The item and the filter

    @Test func eachItemReadsItsStoreAndTheFilterSelectsByIt() throws {
        let all = try queue.list(ReviewFilter(), limit: 100)
        #expect(all.total == ids.count + 1)
        #expect(all.items.filter { $0.store == .googlePlay }.map(\.id) == [play])
        #expect(try queue.detail(id: play).item.store == .googlePlay)
        #expect(try queue.detail(id: try #require(ids["t-m1"])).item.store == .appStore)

        let onlyPlay = try queue.list(filter(.googlePlay), limit: 100)
        #expect(onlyPlay.total == 1 && onlyPlay.items.map(\.id) == [play])
        #expect(onlyPlay.items[0].transactionID == ReviewFixtures.playOrder)
        // The counts beside the kind chips count the store's items only.
        #expect(onlyPlay.countsByKind.first { $0.kind == .missedDelivery }?.count == 1)
        #expect(onlyPlay.countsByKind.map(\.count).reduce(0, +) == 1)

        let onlyApple = try queue.list(filter(.appStore), limit: 100)
        #expect(onlyApple.total == ids.count && !onlyApple.items.contains { $0.id == play })
        #expect(onlyApple.items.allSatisfy { $0.store == .appStore })
        // With the other fields of the filter, as before: Apple's missed deliveries.
        let appleMissed = try queue.list(filter(.appStore, kinds: [.missedDelivery]), limit: 100)
        #expect(Set(appleMissed.items.compactMap(\.transactionID)) == ["t-m1", "t-x1", "t-a1"])
    }

    /// The filter is bound as one composite value: text with quotes, backslashes, commas and
    /// parentheses reaches the comparison unchanged.
    @Test func theFilterBindsAsOneValueWhateverItsText() throws {
        var hostile = ReviewFilter()
        hostile.productID = ReviewFixtures.hostileProduct
        #expect(try queue.list(hostile).items.compactMap(\.transactionID) == ["t-x1"])
        var user = ReviewFilter()
        user.userID = ReviewFixtures.hostileUser
        user.statuses = [.open]
        #expect(try queue.list(user).items.compactMap(\.transactionID) == ["t-x1"])
        var odd = ReviewFilter()
        odd.userID = #"a\"b,(c)\\"#
        #expect(try queue.list(odd).total == 0)
        var empty = ReviewFilter()
        empty.userID = ""
        #expect(try queue.list(empty).total == 0, "an empty text is a value, not a missing one")
        var ids = ReviewFilter()
        ids.ids = [play, try #require(self.ids["t-m1"])]
        ids.since = Date(timeIntervalSinceNow: -3_600)
        #expect(try queue.list(ids).total == 2)
    }

    @Test func aRecordIsWrittenInPostgreSQLsCompositeText() {
        let record = PostgresRecord([["open", "in_review"], String?.none, #"a"b\c"#, "", Int64(7)])
        #expect(record.postgresText == #"("{\"open\",\"in_review\"}",,"a\"b\\c","","7")"#)
    }

    /// The queue's statements keep their indexes: the filter is folded into plain conditions on the
    /// columns (no call of the function is left in the plan) and a selective field is found by its
    /// index, as with the fifteen arguments before.
    @Test func theQueueStatementsStayIndexDriven() throws {
        try connection.execute(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
                 suggested_action, evidence, first_seen_run, last_seen_run, store)
            SELECT 'missed_delivery:bulk-' || i, 'missed_delivery', 'high', 'auto_resolved', 'bulk-' || i, 'bulk-' || i,
                   'bulk-user-' || i, 'coin42', 'grant', '{}', 1, 1,
                   CASE WHEN i % 2 = 0 THEN 'google_play' ELSE 'app_store' END
              FROM generate_series(1, 20000) i
            """)
        try connection.execute("ANALYZE reconcile.review_items")
        func plan(_ file: SQLFile, _ filter: ReviewFilter, extra: SQLValues = [:]) throws -> String {
            let bound = try file.bound(filter.values().merging(extra) { $1 }, relations: [:])
            let statement = try #require(bound.last)
            return try connection.query("EXPLAIN " + statement.sql, statement.parameters)
                .map { try $0.decode(String.self, at: 0) }.joined(separator: "\n")
        }
        let pageValues: SQLValues = ["severity_order": ReviewQueue.severityOrder, "limit": 50, "offset": 0]
        var byUser = filter(.googlePlay)
        byUser.userID = "bulk-user-42"
        let userPlan = try plan(ReviewSQL.page, byUser, extra: pageValues)
        #expect(userPlan.contains("review_items_user_idx"), "\(userPlan)")
        #expect(userPlan.contains("'google_play'::text"), "\(userPlan)")
        #expect(!userPlan.contains("review_item_matches"), "\(userPlan)")

        var open = filter(.googlePlay)
        open.statuses = [.open, .inReview]
        let countPlan = try plan(ReviewSQL.count, open)
        #expect(countPlan.contains("review_items_status_kind_idx"), "\(countPlan)")
        #expect(!countPlan.contains("review_item_matches"), "\(countPlan)")

        // A bound per currency, too (migration 0027's sub-select kept the function from being inlined).
        var capped = open
        capped.maxAmountMilliByCurrency = ["CNY": 6_000, "USD": 990]
        let bulkPlan = try plan(ReviewSQL.bulkCandidates, capped, extra: ["actor": "mei", "limit": 10])
        #expect(bulkPlan.contains("review_items_status_kind_idx"), "\(bulkPlan)")
        #expect(!bulkPlan.contains("review_item_matches") && !bulkPlan.contains("review_item_decidable_by"), "\(bulkPlan)")

        var ticked = ReviewFilter()
        ticked.ids = [play]
        let idsPlan = try plan(ReviewSQL.countsByKind, ticked)
        #expect(idsPlan.contains("review_items_pkey"), "\(idsPlan)")
    }

    // MARK: What programs read

    @Test func theCSVExportEndsEachLineWithTheStore() throws {
        var text = ""
        try queue.exportCSV(ReviewFilter()) { text += $0 }
        let lines = text.split(separator: "\r\n").map(String.init)
        #expect(lines[0].hasPrefix("id,status,kind,severity,transaction_id"))
        #expect(lines[0].hasSuffix(",last_seen_run,store"))
        let playLines = lines.filter { $0.contains(ReviewFixtures.playOrder) }
        #expect(playLines.count == 1 && playLines[0].hasSuffix(",google_play"))
        #expect(lines.dropFirst().filter { $0.hasSuffix(",app_store") }.count == ids.count)

        var onlyPlay = ""
        try queue.exportCSV(filter(.googlePlay)) { onlyPlay += $0 }
        #expect(onlyPlay.split(separator: "\r\n").count == 2)
    }

    /// A decision on the Play item queues an action marked as Play's; the Apple one stays Apple's;
    /// `outbox list --json` (the row's JSON) says so.
    @Test func aDecisionQueuesItsItemsStore() throws {
        let playOutcome = try service.resolve(id: play, resolution: .granted, by: "mei", note: nil)
        let playEntry = try #require(playOutcome.outbox)
        #expect(playEntry.store == .googlePlay && playEntry.transactionID == ReviewFixtures.playOrder)
        #expect(playEntry.toUserID == "a1" && playEntry.productID == "coin42")
        let apple = try #require(ids["t-m1"])
        let appleEntry = try #require(try service.resolve(id: apple, resolution: .granted, by: "mei", note: nil).outbox)
        #expect(appleEntry.store == .appStore)

        let listed = try ActionOutbox(connection: connection).list()
        #expect(listed.map(\.store) == [.googlePlay, .appStore])
        let object = try #require(try JSONSerialization.jsonObject(with: try listed[0].json()) as? [String: Any])
        #expect(object["store"] as? String == "google_play")
        let stored = try connection.query(
            "SELECT store FROM reconcile.action_outbox WHERE review_item_id = $1", [play])[0].decode(String.self, at: 0)
        #expect(stored == "google_play")
        #expect(try queue.detail(id: play).outbox?.store == .googlePlay)
    }

    /// The webhook's body carries the store of each action.
    @Test func theWebhookBodySaysWhichStore() async throws {
        _ = try service.resolve(id: play, resolution: .granted, by: "mei", note: nil)
        _ = try service.resolve(id: try #require(ids["t-m1"]), resolution: .granted, by: "mei", note: nil)
        let bodies = Mutex<[Data]>([])
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { request, _ -> Response in
            var request = request
            let body = Data(buffer: try await request.collectBody(upTo: 1 << 20))
            bodies.withLock { $0.append(body) }
            return Response(status: .ok)
        }
        let url = database.url
        try await WebhookServer.run(router) { port in
            let webhook = ActionOutbox.Webhook(
                url: "http://127.0.0.1:\(port)/hook", secret: "s3cret", maxAttempts: 3, backoff: .milliseconds(10),
                timeout: .seconds(60))
            let quiet = Logger(label: "outbox", factory: { _ in SwiftLogNoOpLogHandler() })
            let delivery = try await ActionOutbox(connection: try Connection(url: url)).deliver(to: webhook, logger: quiet)
            #expect(delivery.delivered == 2)
        }
        let stores = try bodies.withLock { $0 }.map { body -> [String: String] in
            let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            return [try #require(object["transaction_id"] as? String): try #require(object["store"] as? String)]
        }.reduce(into: [String: String]()) { $0.merge($1) { $1 } }
        #expect(stores == [ReviewFixtures.playOrder: "google_play", "t-m1": "app_store"])
    }

    // MARK: Deciding by store

    @Test func aBulkDecisionTakesOnlyTheStoreNamed() throws {
        let bulk = BulkDecision(
            filter: filter(.googlePlay, kinds: [.missedDelivery]), person: "mei", approval: .none, judgement: .asStored)
        let preview = try bulk.preview(on: connection)
        #expect(preview.items == 1 && preview.first.map(\.id) == [play])
        let outcome = try bulk.run(.dismiss, note: "a licence tester", on: connection)
        #expect(outcome.decided == 1)
        let statuses = Dictionary(uniqueKeysWithValues: try connection.query(
            "SELECT transaction_id, status FROM reconcile.review_items WHERE kind = 'missed_delivery'"
        ).map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) })
        #expect(statuses == [
            ReviewFixtures.playOrder: "dismissed", "t-m1": "open", "t-x1": "open", "t-a1": "auto_resolved",
        ])
    }

    /// `review list|show|resolve|dismiss` on the command line: `--store` selects, the table and the
    /// JSON say which store, a store this build does not know is a usage error.
    @Test func theCommandLineFiltersByStore() async throws {
        func reconcile(_ arguments: [String]) async throws -> (status: Int32, out: String, err: String) {
            let result = try await BulkDecisionTests.reconcile(arguments, database)
            return (result.0, result.1, result.2)
        }
        let list = try await reconcile(["list", "--store", "google_play", "--format", "json"])
        #expect(list.status == 0, "\(list.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.out.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.map { $0["store"] as? String } == ["google_play"])
        #expect(items.first?["transaction_id"] as? String == ReviewFixtures.playOrder)
        let table = try await reconcile(["list", "--store", "app_store"])
        #expect(table.status == 0 && table.out.contains("STORE") && table.out.contains("app_store"), "\(table.out)")
        #expect(!table.out.contains("GPA.") && !table.out.contains("google_play"))
        let csv = try await reconcile(["list", "--store", "google_play", "--format", "csv"])
        #expect(csv.out.hasPrefix("id,status,kind,severity,transaction_id") && csv.out.contains(",google_play\r\n"))
        let unknown = try await reconcile(["list", "--store", "app_gallery"])
        #expect(unknown.status == 64, "\(unknown.err)")

        let show = try await reconcile(["show", String(play)])
        #expect(show.out.contains("store         google_play"), "\(show.out)")
        #expect(show.out.contains("order id      \(ReviewFixtures.playOrder)"), "\(show.out)")
        let showJSON = try await reconcile(["show", String(play), "--json"])
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(showJSON.out.utf8)) as? [String: Any])
        #expect(shown["store"] as? String == "google_play", "\(showJSON.out)")

        let resolve = try await reconcile([
            "resolve", "--store", "google_play", "--kind", "missed_delivery", "--resolution", "no_action", "--by", "mei",
            "--note", "a licence tester", "--yes",
        ])
        #expect(resolve.status == 0, "\(resolve.out) \(resolve.err)")
        let dismiss = try await reconcile([
            "dismiss", "--store", "app_store", "--kind", "missed_delivery", "--by", "mei", "--note", "QA", "--yes",
        ])
        #expect(dismiss.status == 0, "\(dismiss.out) \(dismiss.err)")
        let statuses = Dictionary(uniqueKeysWithValues: try connection.query(
            "SELECT transaction_id, status FROM reconcile.review_items WHERE kind = 'missed_delivery'"
        ).map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) })
        #expect(statuses == [
            ReviewFixtures.playOrder: "resolved", "t-m1": "dismissed", "t-x1": "dismissed", "t-a1": "auto_resolved",
        ])
    }

    @Test func aPolicyNamingAStoreDecidesOnlyThatStoresItems() throws {
        let file = try PolicyFile.parse("""
            rules:
              - name: play-testers
                when: {kind: missed_delivery, store: google_play}
                decide: no_action
                note: Play licence testers
            """)
        #expect(file.rules[0].conditions.stores == [.googlePlay])
        let engine = PolicyEngine(
            file: file, approval: .none, judgement: .asStored, logger: Logger(label: "test"))
        #expect(try engine.preview(on: connection).map(\.id) == [play])
        let outcome = try engine.apply(runID: 1, on: connection)
        #expect(outcome.total == 1)
        let decided = try connection.query(
            "SELECT id, store FROM reconcile.review_items WHERE resolved_by = 'policy:play-testers'")
        #expect(decided.count == 1)
        #expect(try decided[0].decode(Int64.self, at: 0) == play && decided[0].decode(String.self, at: 1) == "google_play")
        #expect(try queue.detail(id: try #require(ids["t-m1"])).item.status == .open)

        let both = try PolicyFile.parse("""
            rules:
              - name: both
                when: {kind: missed_delivery, store: [app_store, google_play]}
                decide: no_action
                note: both
            """)
        #expect(both.rules[0].conditions.stores == [.appStore, .googlePlay])
    }

    // MARK: The report's findings

    static let playFinding = RunReport.Finding(
        reviewItemID: 9, isNew: true, kind: .missedDelivery, store: .googlePlay, transactionID: "GPA.1-2-3",
        originalTransactionID: "GPA.1-2-3", userID: "a1", productID: "coin42", evidence: "{}", amountMilli: 6_000,
        currency: "CNY", purchaseDate: nil)

    @Test func theReportsFindingsSayWhichStore() throws {
        let json = ReportFormat.jsonFinding(Self.playFinding)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["store"] as? String == "google_play")
        #expect(ReportFormat.csvHeader.hasSuffix(",currency,store\r\n"))
        #expect(ReportFormat.csvRow(Self.playFinding).hasSuffix(",CNY,google_play\r\n"))
        var apple = Self.playFinding
        apple.store = .appStore
        #expect(ReportFormat.csvRow(apple).hasSuffix(",CNY,app_store\r\n"))
        let english = Reader(language: .english), chinese = Reader(language: .simplifiedChinese)
        #expect(ReportFormat.markdownRow(Self.playFinding, english).contains("| Google Play |"))
        #expect(ReportFormat.markdownRow(apple, chinese).contains("| App Store |"))
        #expect(ReportFormat.htmlRow(Self.playFinding, english).contains(">Google Play</td>"))
        #expect(ReportFormat.htmlRow(Self.playFinding, chinese).contains(">Google Play</td>"))
    }

    @Test func bothCatalogsNameTheStoresAndGooglesOrderID() {
        for language in [Language.english, .simplifiedChinese] {
            let t = Reader(language: language).catalog
            #expect(t.store(.appStore) == "App Store" && t.store(.googlePlay) == "Google Play")
        }
        let english = Reader(language: .english).catalog, chinese = Reader(language: .simplifiedChinese).catalog
        #expect(english.transactionLabel(.googlePlay) == "Google order id")
        #expect(english.transactionLabel(.appStore) == "Transaction")
        #expect(chinese.transactionLabel(.googlePlay) == "Google 订单号")
    }
}
