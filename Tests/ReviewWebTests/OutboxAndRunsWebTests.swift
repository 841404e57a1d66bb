import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import Synchronization
import TestSupport
import Testing

/// A decision made in the browser reaches the app's webhook (SPEC section 13) as the CLI's does:
/// in the background, each row once, against a real local HTTP server.
@Suite("Web decisions reach the app")
struct WebDecisionDeliveryTests {
    @Test func aDecisionInTheBrowserDeliversItsRowOnce() async throws {
        let (database, connection) = try TestDatabase.migrated("web_webhook")
        let ids = try ReviewFixtures.seed(on: connection)
        let granted = try #require(ids["t-m1"]), dismissed = try #require(ids["t-d1"])
        // The app's endpoint: refuses the first request (the retry delivers it), then accepts.
        let received = Mutex<[(key: String, accepted: Bool)]>([])
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { request, _ -> Response in
            let key = request.headers.first { $0.name.canonicalName == "idempotency-key" }?.value ?? ""
            let accepted = received.withLock { log in
                log.append((key, !log.isEmpty))
                return log.count > 1
            }
            return Response(status: accepted ? .ok : .serviceUnavailable)
        }
        let url = database.url
        try await WebhookServer.run(router) { port in
            var configuration = ReviewWebConfiguration(
                host: "127.0.0.1", port: 0, databaseURL: url, token: Secret(ReviewWebTests.token), judgement: .asStored)
            // A generous exchange deadline: deadlines are not this test's subject (see OutboxTests).
            configuration.outboxWebhook = ActionOutbox.Webhook(
                url: "http://127.0.0.1:\(port)/hook", secret: "s3cret", maxAttempts: 5, backoff: .milliseconds(10),
                timeout: .seconds(60))
            let application = try buildApplication(configuration: configuration)
            try await application.test(.router) { client in
                let cookie = try await ReviewWebTests.login(client)
                let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
                let response = try await ReviewWebTests.post(
                    client, "/items/\(granted)/resolve", cookie: cookie,
                    [("csrf_token", csrf), ("resolution", "granted"), ("note", "paid, never delivered")])
                #expect(response.status == .seeOther)
                let row = try await Self.delivered(item: granted, url: url)
                #expect(row != nil, "the decision's row is delivered without a run or a command")
                // Another decision starts another pass: the delivered row is not sent again.
                let dismiss = try await ReviewWebTests.post(
                    client, "/items/\(dismissed)/dismiss", cookie: cookie,
                    [("csrf_token", csrf), ("note", "one delivery was a retry")])
                #expect(dismiss.status == .seeOther)
                try await Task.sleep(for: .milliseconds(500))
                let log = received.withLock { $0 }
                #expect(log.map(\.key) == [String(row ?? 0), String(row ?? 0)], "refused once, then accepted")
                #expect(log.filter(\.accepted).count == 1, "delivered once")
            }
        }
    }

    /// The app's endpoint is down for 10 s (a deploy) when a decision is made: the first pass's
    /// attempts (the defaults `reconcile serve` uses, about 3 s in all) all fail, and the server
    /// tries the row again later by itself, without another decision or a run, until it is taken.
    @Test func aDecisionMadeDuringAShortWebhookOutageIsDeliveredOnceTheWebhookIsBack() async throws {
        let (database, connection) = try TestDatabase.migrated("web_webhook_retry")
        let ids = try ReviewFixtures.seed(on: connection)
        let granted = try #require(ids["t-m1"])
        let back = ContinuousClock.now + .seconds(10)
        let received = Mutex<[Bool]>([])
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { _, _ -> Response in
            let up = ContinuousClock.now > back
            received.withLock { $0.append(up) }
            return Response(status: up ? .ok : .serviceUnavailable)
        }
        let url = database.url
        try await WebhookServer.run(router) { port in
            var configuration = ReviewWebConfiguration(
                host: "127.0.0.1", port: 0, databaseURL: url, token: Secret(ReviewWebTests.token), judgement: .asStored)
            // What `reconcile serve` builds from RECONCILE_OUTBOX_WEBHOOK_URL and _SECRET.
            configuration.outboxWebhook = ActionOutbox.Webhook(url: "http://127.0.0.1:\(port)/hook", secret: "s3cret")
            let application = try buildApplication(configuration: configuration)
            try await application.test(.router) { client in
                let cookie = try await ReviewWebTests.login(client)
                let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
                let response = try await ReviewWebTests.post(
                    client, "/items/\(granted)/resolve", cookie: cookie,
                    [("csrf_token", csrf), ("resolution", "granted"), ("note", "paid, never delivered")])
                #expect(response.status == .seeOther)
                var row: Int64?
                while row == nil, ContinuousClock.now < back + .seconds(50) {
                    row = try await Self.delivered(item: granted, url: url)
                }
                let log = received.withLock { $0 }
                #expect(row != nil, "\(log.count) attempts, \(log.filter { $0 }.count) after the outage")
                #expect(log.filter { $0 }.count == 1, "taken once")
            }
        }
    }

    /// The outbox row of the item once its `delivered_at` is set (waits up to 10 s), nil if never.
    static func delivered(item: Int64, url: String) async throws -> Int64? {
        let connection = try Connection(url: url)
        for _ in 0..<100 {
            if let row = try connection.queryFirst(
                "SELECT id FROM reconcile.action_outbox WHERE review_item_id = $1 AND delivered_at IS NOT NULL", item)
            {
                return try row.decode(Int64.self, at: 0)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}

/// The runs page lists the nightly and ad-hoc runs, not the desk's lookups (`runs.kind = 'lookup'`).
@Suite("Runs page")
struct RunsPageTests {
    @Test func theDesksLookupsAreNotRuns() async throws {
        let (database, connection) = try TestDatabase.migrated("web_runs")
        try ReviewFixtures.seed(on: connection)
        let run = try connection.query("SELECT max(id) FROM reconcile.runs")[0].decode(Int64.self, at: 0)
        let lookup = try connection.query(
            """
            INSERT INTO reconcile.runs (kind, status, window_until, environment, dry_run, finished_at)
            VALUES ('lookup', 'completed', now(), 'production', true, now()) RETURNING id
            """)[0].decode(Int64.self, at: 0)
        let application = try buildApplication(configuration: ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored))
        try await application.test(.router) { client in
            let cookie = try await ReviewWebTests.login(client)
            let page = String(buffer: try await ReviewWebTests.get(client, "/runs", cookie: cookie).body)
            #expect(page.contains("<tr><td>\(run)</td>"))
            #expect(!page.contains("<tr><td>\(lookup)"))
        }
    }
}
