import AppStore
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import Postgres

/// `reconcile.action_outbox` as the app consumes it (SPEC section 13): listed, acked, and
/// optionally POSTed to the app's webhook, signed, until it answers 2xx.
public struct ActionOutbox {
    /// The most rows one listing returns.
    public static let maximumListed = 10_000

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(CustomerPicture.timestamp.format(date))
        }
        return encoder
    }()

    private let connection: Connection

    /// The outbox on one connection.
    public init(connection: Connection) {
        self.connection = connection
    }

    /// Rows oldest first; `pending` keeps those not consumed.
    public func list(pending: Bool = false, limit: Int = ActionOutbox.maximumListed) throws -> [OutboxEntry] {
        try connection.query(SQL.list, ["pending": pending, "limit": min(max(limit, 1), Self.maximumListed)])
            .map(OutboxEntry.init(row:))
    }

    /// Marks rows consumed by `actor`; a row acked before keeps its first ack. Returns the ids
    /// that do not exist. `actor` is a person's name as a decision's is
    /// (``ReviewActor/validatedName(_:)``): none the product acts under.
    public func ack(_ ids: [Int64], by actor: String) throws -> [Int64] {
        let actor = try ReviewActor.validatedName(actor)
        let known = try connection.transaction {
            try Set(connection.query(SQL.ack, ["ids": ids, "actor": actor]).map { try $0.decode(Int64.self, at: 0) })
        }
        return ids.filter { !known.contains($0) }
    }

    // MARK: - Webhook

    /// Where and how to deliver.
    public struct Webhook: Sendable {
        public var url: String
        public var secret: String
        /// Attempts per row within one delivery pass; what still fails waits for the next pass.
        public var maxAttempts: Int
        /// The first wait between attempts; doubled each time.
        public var backoff: Duration
        /// The deadline of one exchange, from connecting to the last byte of the answer's body: a
        /// webhook that answers its head and then trickles the body is cut off by it too.
        public var timeout: Duration
        /// A pass claims no further row after this long; the rows it did not reach wait for the
        /// next pass, so a slow webhook never holds up a run's exit or the next night.
        public var passBudget: Duration

        public init(
            url: String, secret: String, maxAttempts: Int = 5, backoff: Duration = .milliseconds(200),
            timeout: Duration = .seconds(10), passBudget: Duration = .seconds(300)
        ) {
            self.url = url
            self.secret = secret
            self.maxAttempts = max(1, maxAttempts)
            self.backoff = backoff
            self.timeout = timeout
            self.passBudget = passBudget
        }

        /// The webhook of the settings, or nil when none is configured.
        public init?(settings: Settings) {
            guard let url = settings.outboxWebhookURL, let secret = settings.outboxWebhookSecret else { return nil }
            self.init(url: url, secret: secret.value)
        }

        /// `sha256=<hex HMAC-SHA256 of body under the secret>`.
        public func signature(of body: Data) -> String {
            let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
            return "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
        }

        /// The longest one row can take: every attempt's deadline and every wait between them.
        var worstRow: Duration {
            var total = timeout * maxAttempts
            for attempt in 0..<max(0, maxAttempts - 1) { total += backoff * (1 << min(attempt, 10)) }
            return total
        }

        /// How long a claimed row is left to its pass (`next_delivery_at`): the worst row and a
        /// minute besides, so no other pass sends it while this one may still be sending.
        var lease: Duration { worstRow + .seconds(60) }
    }

    /// What a delivery pass did.
    public struct Delivery: Sendable, Equatable {
        public var delivered = 0
        public var failed = 0
        /// Rows the pass did not reach within its budget: they wait for the next pass.
        public var left = 0

        public init(delivered: Int = 0, failed: Int = 0, left: Int = 0) {
            self.delivered = delivered
            self.failed = failed
            self.left = left
        }
    }

    /// POSTs every undelivered row, one at a time and oldest first. No lock or transaction is held
    /// across the network: each row is first claimed in a statement of its own, which leases it
    /// (`next_delivery_at`, longer than the row can take) so that no other pass sends it meanwhile,
    /// then POSTed, then marked in another short statement: a 2xx sets `delivered_at`; a row that
    /// keeps failing is left, with its error, for the next pass. Every wait honours cancellation.
    public func deliver(to webhook: Webhook, logger: Logger) async throws -> Delivery {
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            let result = try await deliver(to: webhook, http: http, logger: logger)
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    private func deliver(to webhook: Webhook, http: HTTPClient, logger: Logger) async throws -> Delivery {
        let clock = ContinuousClock()
        let passEnds = clock.now + webhook.passBudget
        var result = Delivery()
        var after: Int64 = 0
        while true {
            try Task.checkCancellation()
            guard clock.now < passEnds else {
                result.left = try connection.query(SQL.leftUndelivered, ["after": after])[0].decode(Int.self, at: 0)
                if result.left > 0 {
                    logger.notice("outbox delivery pass out of time", metadata: ["outbox.left": "\(result.left)"])
                }
                return result
            }
            let leaseEnds = clock.now + webhook.lease
            guard let row = try connection.queryFirst(
                SQL.claimForDelivery, ["after": after, "lease_seconds": Double(webhook.lease.components.seconds)]
            ).map(OutboxEntry.init(row:)) else {
                return result
            }
            after = row.id
            let outcome = try await post(row, to: webhook, http: http, leaseEnds: leaseEnds, logger: logger)
            if outcome.ok {
                try connection.execute(SQL.delivered, ["id": row.id, "attempts": outcome.attempts])
                result.delivered += 1
            } else {
                try connection.execute(
                    SQL.deliveryFailed, ["id": row.id, "attempts": outcome.attempts, "error": outcome.error])
                result.failed += 1
            }
        }
    }

    /// The statements, in `sql/outbox/`.
    enum SQL {
        static let list: SQLFile = "outbox/list.sql"
        static let ack: SQLFile = "outbox/ack.sql"
        static let leftUndelivered: SQLFile = "outbox/left_undelivered.sql"
        static let claimForDelivery: SQLFile = "outbox/claim_for_delivery.sql"
        static let delivered: SQLFile = "outbox/delivered.sql"
        static let deliveryFailed: SQLFile = "outbox/delivery_failed.sql"
    }

    private func post(
        _ row: OutboxEntry, to webhook: Webhook, http: HTTPClient, leaseEnds: ContinuousClock.Instant, logger: Logger
    ) async throws -> (ok: Bool, attempts: Int, error: String?) {
        var lastError: String?
        var attempts = 0
        for attempt in 1...webhook.maxAttempts {
            if attempt > 1 {
                try await Task.sleep(for: webhook.backoff * (1 << min(attempt - 2, 10)))
            }
            // A pass that was stopped (SIGSTOP, a suspended VM) past its lease may no longer send:
            // another pass may hold the row now.
            guard ContinuousClock.now + webhook.timeout < leaseEnds else {
                lastError = lastError ?? "the row's lease ran out before it could be sent"
                break
            }
            attempts = attempt
            do {
                let status = try await exchange(row, webhook: webhook, http: http)
                if (200..<300).contains(status) { return (true, attempt, nil) }
                lastError = "HTTP \(status)"
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try Task.checkCancellation()
                lastError = "\(type(of: error)): \(error)"
            }
            logger.notice("outbox webhook failed", metadata: [
                "outbox.id": "\(row.id)", "attempt": "\(attempt)", "error": "\(lastError ?? "")",
            ])
        }
        return (false, attempts, lastError)
    }

    /// One POST and its whole answer, head and body, within the webhook's deadline. The body is
    /// read (at most 64 KB of it is kept in flight) so that the connection ends cleanly.
    private func exchange(_ row: OutboxEntry, webhook: Webhook, http: HTTPClient) async throws -> Int {
        let body = try row.json()
        var request = HTTPClientRequest(url: webhook.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Reconcile-Signature", value: webhook.signature(of: body))
        request.headers.add(name: "Idempotency-Key", value: String(row.id))
        request.body = .bytes(body)
        guard let status = try await HTTPExchange.send(request, within: webhook.timeout, http: http) else {
            throw HTTPExchange.Timeout(deadline: webhook.timeout)
        }
        return status
    }
}

extension ActionOutbox {
    /// Delivers the outbox of the settings' database when a webhook is configured; nil when not.
    public static func deliverIfConfigured(settings: Settings, logger: Logger) async throws -> Delivery? {
        guard let webhook = Webhook(settings: settings) else { return nil }
        let connection = try settings.connect()
        return try await ActionOutbox(connection: connection).deliver(to: webhook, logger: logger)
    }
}

extension OutboxEntry {
    /// The row as JSON (the webhook's body and `outbox list --json`): RFC 3339 UTC times.
    public func json() throws -> Data {
        try ActionOutbox.encoder.encode(self)
    }
}
