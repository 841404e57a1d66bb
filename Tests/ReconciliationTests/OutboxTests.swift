import Crypto
import Foundation
import Hummingbird
import Logging
import Postgres
import Reconciliation
import Synchronization
import TestSupport
import Testing

/// `reconcile.action_outbox` as the app consumes it: list, ack, and the signed webhook against a
/// real local HTTP server that fails before it succeeds (SPEC section 13).
@Suite("Outbox: list, ack and the signed webhook")
struct OutboxTests {
    /// Three decisions in the outbox: grant, revoke, move.
    static func world(_ name: String) throws -> (TestDatabase, Connection) {
        let database = try TestDatabase.create(name)
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        let ids = try ReviewFixtures.seed(on: connection)
        let review = ReviewService(connection: connection)
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
        let (ports, sink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { sink.yield($0.localAddress?.port ?? 0); sink.finish() },
            logger: Logger(label: "hook", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let webhook = ActionOutbox.Webhook(
                url: "http://127.0.0.1:\(port)/hook", secret: "s3cret", maxAttempts: 5, backoff: .milliseconds(10))
            let quiet = Logger(label: "outbox", factory: { _ in SwiftLogNoOpLogHandler() })
            let url = database.url
            async let one = ActionOutbox(connection: try Connection(url: url)).deliver(to: webhook, logger: quiet)
            async let two = ActionOutbox(connection: try Connection(url: url)).deliver(to: webhook, logger: quiet)
            let (a, b) = try await (one, two)
            #expect(a.delivered + b.delivered == 3)
            #expect(a.failed + b.failed == 0)
            let again = try await ActionOutbox(connection: connection).deliver(to: webhook, logger: quiet)
            #expect(again == ActionOutbox.Delivery())
            group.cancelAll()
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
}
