import Crypto
import Foundation
import Hummingbird
import Logging
import Postgres
@testable import Reconciliation
import Synchronization
import TestSupport
import Testing

/// `reconcile.action_outbox` as the app consumes it: list, ack, and the signed webhook against a
/// real local HTTP server that fails before it succeeds (SPEC section 13).
@Suite("Outbox: list, ack and the signed webhook")
struct OutboxTests {
    /// Three decisions in the outbox: grant, revoke, move.
    static func world(_ name: String) throws -> (TestDatabase, Connection) {
        let (database, connection) = try TestDatabase.migrated(name)
        let ids = try ReviewFixtures.seed(on: connection)
        let review = ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
        _ = try review.resolve(id: ids["t-m1"]!, resolution: .granted, by: "lin", note: nil)
        _ = try review.resolve(id: ids["t-d1"]!, resolution: .revoked, by: "lin", note: nil)
        _ = try review.resolve(id: ids["t-w1"]!, resolution: .moved, by: "lin", note: "wrong login")
        return (database, connection)
    }

    @Test func ackMarksRowsConsumedOnceAndListPendingLeavesThemOut() throws {
        let (_, connection) = try Self.world("outbox_ack")
        let outbox = ActionOutbox(connection: connection)
        let rows = try outbox.list()
        #expect(rows.map(\.action.rawValue) == ["grant", "revoke", "move"])
        #expect(try outbox.ack([rows[0].id], by: "app-worker").isEmpty)
        let first = try #require(try outbox.list().first?.consumedAt)
        #expect(try outbox.ack([rows[0].id, 999_999], by: "someone-else") == [999_999])
        #expect(try outbox.list().first?.consumedAt == first, "acking twice keeps the first ack")
        #expect(try outbox.list().first?.consumedBy == "app-worker")
        #expect(try outbox.list(pending: true).map(\.action.rawValue) == ["revoke", "move"])
    }

    /// The app's endpoint answers 503 to the first three requests, then 200. Two delivery passes
    /// run at once: every row arrives signed, and each is accepted exactly once.
    @Test func theWebhookRetriesUntil2xxAndDeliversEachRowOnce() async throws {
        let (database, connection) = try Self.world("outbox_webhook")
        let received = Mutex<[(key: String, signature: String, body: Data, accepted: Bool)]>([])
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { request, _ -> Response in
            var request = request
            func header(_ name: String) -> String {
                request.headers.first { $0.name.canonicalName == name.lowercased() }?.value ?? ""
            }
            let body = Data(buffer: try await request.collectBody(upTo: 1 << 20))
            let accepted = received.withLock { log in
                let accepted = log.count >= 3
                log.append((header("Idempotency-Key"), header("X-Reconcile-Signature"), body, accepted))
                return accepted
            }
            return Response(status: accepted ? .ok : .serviceUnavailable)
        }
        try await WebhookServer.run(router) { port in
            // The exchange's deadline is not this test's subject: a generous one, so that peers
            // holding both cooperative threads of a loaded two-core CI machine cannot turn a slow
            // 503 or 200 into a timeout (CI once saw every attempt fail here).
            let webhook = ActionOutbox.Webhook(
                url: "http://127.0.0.1:\(port)/hook", secret: "s3cret", maxAttempts: 5, backoff: .milliseconds(10),
                timeout: .seconds(60))
            let quiet = Logger(label: "outbox", factory: { _ in SwiftLogNoOpLogHandler() })
            let url = database.url
            async let one = ActionOutbox(connection: try Connection(url: url)).deliver(to: webhook, logger: quiet)
            async let two = ActionOutbox(connection: try Connection(url: url)).deliver(to: webhook, logger: quiet)
            let (a, b) = try await (one, two)
            // What each row's last attempt met, so that a failure says why (CI once saw every
            // attempt fail with a quiet logger and nothing else to read).
            let errors = try connection.query("SELECT last_delivery_error FROM reconcile.action_outbox ORDER BY id").map { try $0.decode(String?.self, at: 0) ?? "-" }
            #expect(a.delivered + b.delivered == 3, "last errors: \(errors)")
            #expect(a.failed + b.failed == 0)
            let again = try await ActionOutbox(connection: connection).deliver(to: webhook, logger: quiet)
            #expect(again == ActionOutbox.Delivery())
        }

        let rows = try ActionOutbox(connection: connection).list()
        #expect(rows.allSatisfy { $0.deliveredAt != nil && $0.consumedAt == nil }, "delivered is not consumed")
        let log = received.withLock { $0 }
        #expect(log.count == 6, "three refused, then one accepted per row")
        let accepted = log.filter(\.accepted)
        #expect(accepted.map(\.key).sorted() == rows.map { String($0.id) }.sorted(), "each row accepted once")
        for request in log {
            let mac = HMAC<SHA256>.authenticationCode(for: request.body, using: SymmetricKey(data: Data("s3cret".utf8)))
            #expect(request.signature == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
            let object = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
            #expect(String(describing: object["id"] ?? "") == request.key)
            #expect(Set(object.keys).isSuperset(of: [
                "id", "review_item_id", "action", "transaction_id", "product_id", "quantity", "from_user_id",
                "to_user_id", "decided_by", "created_at", "delivered_at", "consumed_at",
            ]))
        }
    }

    /// A webhook that answers its 200 head at once and then trickles the body (chunked forever,
    /// or a two-byte `Content-Length` a byte every 100 s): each exchange ends at the webhook's
    /// deadline, the pass returns with every row failed, and while it runs no row is locked:
    /// `outbox ack` goes through and the app's `SKIP LOCKED` consumer sees every row.
    @Test(arguments: [TricklingHTTPServer.Body.chunkedForever, .smallContentLength])
    func aWebhookTricklingItsBodyIsCutOffAndLocksNothing(body: TricklingHTTPServer.Body) async throws {
        let (database, connection) = try Self.world("outbox_trickle_\(body.rawValue.lowercased())")
        let server = try TricklingHTTPServer(body: body)
        defer { server.stop() }
        let webhook = ActionOutbox.Webhook(
            url: "http://127.0.0.1:\(server.port)/hook", secret: "s3cret", maxAttempts: 2, backoff: .milliseconds(10),
            timeout: .seconds(1))
        let url = database.url
        let pass = Task {
            try await ActionOutbox(connection: try Connection(url: url)).deliver(to: webhook, logger: Self.quiet)
        }
        try await server.waitForRequests(1)

        let other = try Connection(url: url)
        // An upper bound that turns a lock held across the webhook into an error, not a hang.
        try other.execute("SET lock_timeout = '60s'")
        let rows = try ActionOutbox(connection: other).list()
        let unlocked = try other.query(
            "SELECT id FROM reconcile.action_outbox WHERE consumed_at IS NULL ORDER BY id FOR UPDATE SKIP LOCKED"
        ).map { try $0.decode(Int64.self, at: 0) }
        #expect(unlocked == rows.map(\.id), "the consumer skips no row while the webhook is called")
        #expect(try ActionOutbox(connection: other).ack([rows[0].id], by: "app-worker").isEmpty)

        let result = try #require(try await Self.within(.seconds(120)) { try await pass.value })
        #expect(result == ActionOutbox.Delivery(failed: 3))
        #expect(server.requests == 6, "two attempts per row, each cut off")
        let state = try connection.query(
            """
            SELECT delivered_at IS NULL AND next_delivery_at IS NULL AND delivery_attempts = 2
                   AND last_delivery_error LIKE '%no complete answer within 1 s%'
              FROM reconcile.action_outbox ORDER BY id
            """
        ).map { try $0.decode(Bool.self, at: 0) }
        #expect(state == [true, true, true])
    }

    /// A long-running process's delivery (`OutboxDelivery`), started with rows an earlier process
    /// left undelivered, passes over them at once, without waiting for a decision; it keeps
    /// passing over what the webhook refused, each wait twice the last up to the limit, until
    /// every row is taken; then it waits for the next decision. Cancelled, it returns.
    @Test func theDeliveryOfALongRunningProcessRetriesWhatWasRefusedUntilItIsTaken() async throws {
        let (database, connection) = try Self.world("outbox_retry_later")
        // One attempt per row and pass: the endpoint refuses the first two passes (3 rows each).
        let received = Mutex<[ContinuousClock.Instant]>([])
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { _, _ -> Response in
            let count = received.withLock { log in
                log.append(.now)
                return log.count
            }
            return Response(status: count > 6 ? .ok : .serviceUnavailable)
        }
        try await WebhookServer.run(router) { port in
            let webhook = ActionOutbox.Webhook(
                url: "http://127.0.0.1:\(port)/hook", secret: "s3cret", maxAttempts: 1, timeout: .seconds(60))
            let delivery = OutboxDelivery(
                webhook: webhook, databaseURL: database.url,
                retry: .init(first: .milliseconds(300), limit: .milliseconds(400)), logger: Self.quiet)
            let running = Task { await delivery.run() }
            for _ in 0..<600 where try !ActionOutbox(connection: connection).list().allSatisfy({ $0.deliveredAt != nil }) {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try ActionOutbox(connection: connection).list().allSatisfy { $0.deliveredAt != nil })
            // Nothing left undelivered: no further pass.
            try await Task.sleep(for: .seconds(1))
            let log = received.withLock { $0 }
            #expect(log.count == 9, "three passes of three rows")
            if log.count == 9 {
                #expect(log[3] - log[2] >= .milliseconds(300), "the first wait")
                #expect(log[6] - log[5] >= .milliseconds(400), "the second, doubled and capped")
            }
            running.cancel()
            #expect(try await Self.within(.seconds(60)) { await running.value } != nil)
        }
    }

    /// Cancelling a pass (what SIGTERM does) ends it at once while it waits for the webhook's
    /// body, however long the webhook's deadline.
    @Test func cancellingAPassEndsItWhileTheWebhookTrickles() async throws {
        let (database, _) = try Self.world("outbox_cancel")
        let server = try TricklingHTTPServer(body: .chunkedForever)
        defer { server.stop() }
        let webhook = ActionOutbox.Webhook(
            url: "http://127.0.0.1:\(server.port)/hook", secret: "s3cret", timeout: .seconds(3_600))
        let url = database.url
        let pass = Task {
            try await ActionOutbox(connection: try Connection(url: url)).deliver(to: webhook, logger: Self.quiet)
        }
        try await server.waitForRequests(1)
        pass.cancel()
        let outcome = try #require(try await Self.within(.seconds(120)) { await pass.result })
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    /// `reconcile run` ends its run, then delivers the outbox to a webhook that trickles; SIGTERM
    /// ends the delivery and the process exits with the run's status (0), leaving the rows for
    /// the next delivery.
    @Test func sigtermDuringARunsFinalDeliveryExitsWithTheRunsStatus() async throws {
        let (database, connection) = try Self.world("outbox_run_sigterm")
        let server = try TricklingHTTPServer(body: .chunkedForever)
        defer { server.stop() }
        let scratch = Scratch.root.appendingPathComponent("outbox-sigterm-\(getpid())")
        let child = try ChildProcess(
            try ChildProcess.executable("reconcile"), arguments: ["run", "--log-level", "notice"],
            environment: [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.example.game",
                "RECONCILE_REPORT_DIR": scratch.appendingPathComponent("reports").path,
                "RECONCILE_OUTBOX_WEBHOOK_URL": "http://127.0.0.1:\(server.port)/hook",
                "RECONCILE_OUTBOX_WEBHOOK_SECRET": "a-secret-of-enough-length",
            ],
            logDirectory: scratch, label: "run")
        try await server.waitForRequests(1, timeout: .seconds(300))
        child.send(SIGTERM)
        let status = try await child.waitForExit(timeout: .seconds(120))
        #expect(status == 0, "\(child.output)")
        #expect(try ActionOutbox(connection: connection).list().allSatisfy { $0.deliveredAt == nil })
        #expect(try connection.queryFirst("SELECT status FROM reconcile.runs ORDER BY id DESC LIMIT 1")
            .map { try $0.decode(String.self, at: 0) }.map { $0.hasPrefix("completed") } == true)
    }

    static let quiet = Logger(label: "outbox", factory: { _ in SwiftLogNoOpLogHandler() })

    /// What `body` returns, or nil (a recorded failure) when it has not returned after `limit`:
    /// an upper bound for a hung test, never a timing margin. The body keeps running if it hangs.
    static func within<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let work = Task {
            let result = await Result(catching: { try await body() })
            outcome.withLock { $0 = result }
        }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            try await Task.sleep(for: .milliseconds(20))
        }
        work.cancel()
        Issue.record("still running after \(limit)")
        return nil
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
