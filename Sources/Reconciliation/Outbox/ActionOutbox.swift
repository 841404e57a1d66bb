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
        try connection.query(
            """
            SELECT \(OutboxEntry.columns) FROM reconcile.action_outbox
             WHERE NOT $1 OR consumed_at IS NULL
             ORDER BY id LIMIT \(min(max(limit, 1), Self.maximumListed))
            """, [pending]
        ).map(OutboxEntry.init(row:))
    }

    /// Marks rows consumed by `actor`; a row acked before keeps its first ack. Returns the ids
    /// that do not exist.
    public func ack(_ ids: [Int64], by actor: String) throws -> [Int64] {
        let known = try connection.transaction {
            try connection.execute(
                """
                UPDATE reconcile.action_outbox SET consumed_at = now(), consumed_by = $2
                 WHERE id = ANY($1::bigint[]) AND consumed_at IS NULL
                """, [ids, actor])
            return try Set(connection.query(
                "SELECT id FROM reconcile.action_outbox WHERE id = ANY($1::bigint[])", [ids]
            ).map { try $0.decode(Int64.self, at: 0) })
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
        public var timeout: Duration

        public init(
            url: String, secret: String, maxAttempts: Int = 5, backoff: Duration = .milliseconds(200),
            timeout: Duration = .seconds(10)
        ) {
            self.url = url
            self.secret = secret
            self.maxAttempts = max(1, maxAttempts)
            self.backoff = backoff
            self.timeout = timeout
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
    }

    /// What a delivery pass did.
    public struct Delivery: Sendable, Equatable {
        public var delivered = 0
        public var failed = 0

        public init(delivered: Int = 0, failed: Int = 0) {
            self.delivered = delivered
            self.failed = failed
        }
    }

    /// POSTs every undelivered row, one at a time and oldest first, each locked (`FOR UPDATE SKIP
    /// LOCKED`) while it is sent so that two passes at once never send the same row; a 2xx sets
    /// `delivered_at`. A row that keeps failing is left, with its error, for the next pass.
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
        var result = Delivery()
        var after: Int64 = 0
        while true {
            try Task.checkCancellation()
            try connection.execute("BEGIN")
            do {
                guard let row = try connection.queryFirst(
                    """
                    SELECT \(OutboxEntry.columns) FROM reconcile.action_outbox
                     WHERE delivered_at IS NULL AND id > $1
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
                    """, after
                ).map(OutboxEntry.init(row:)) else {
                    try connection.execute("COMMIT")
                    return result
                }
                after = row.id
                let outcome = await post(row, to: webhook, http: http, logger: logger)
                if outcome.ok {
                    try connection.execute(
                        """
                        UPDATE reconcile.action_outbox
                           SET delivered_at = now(), delivery_attempts = delivery_attempts + $2, last_delivery_error = NULL
                         WHERE id = $1
                        """, [row.id, outcome.attempts])
                    result.delivered += 1
                } else {
                    try connection.execute(
                        """
                        UPDATE reconcile.action_outbox
                           SET delivery_attempts = delivery_attempts + $2, last_delivery_error = $3
                         WHERE id = $1
                        """, [row.id, outcome.attempts, outcome.error])
                    result.failed += 1
                }
                try connection.execute("COMMIT")
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    private func post(_ row: OutboxEntry, to webhook: Webhook, http: HTTPClient, logger: Logger) async
        -> (ok: Bool, attempts: Int, error: String?)
    {
        var lastError: String?
        for attempt in 1...webhook.maxAttempts {
            if attempt > 1 {
                let wait = webhook.backoff * (1 << min(attempt - 2, 10))
                try? await Task.sleep(for: wait)
            }
            do {
                let body = try row.json()
                var request = HTTPClientRequest(url: webhook.url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(name: "X-Reconcile-Signature", value: webhook.signature(of: body))
                request.headers.add(name: "Idempotency-Key", value: String(row.id))
                request.body = .bytes(body)
                let response = try await http.execute(
                    request, timeout: .milliseconds(Int64(webhook.timeout.components.seconds * 1000)))
                _ = try? await response.body.collect(upTo: 1 << 16)
                if (200..<300).contains(Int(response.status.code)) { return (true, attempt, nil) }
                lastError = "HTTP \(response.status.code)"
            } catch {
                lastError = "\(type(of: error)): \(error)"
            }
            logger.notice("outbox webhook failed", metadata: [
                "outbox.id": "\(row.id)", "attempt": "\(attempt)", "error": "\(lastError ?? "")",
            ])
        }
        return (false, webhook.maxAttempts, lastError)
    }
}

extension ActionOutbox {
    /// Delivers the outbox of the settings' database when a webhook is configured; nil when not.
    public static func deliverIfConfigured(settings: Settings, logger: Logger) async throws -> Delivery? {
        guard let webhook = Webhook(settings: settings) else { return nil }
        let connection = try Connection(url: settings.databaseURL)
        return try await ActionOutbox(connection: connection).deliver(to: webhook, logger: logger)
    }
}

extension OutboxEntry {
    /// The row as JSON (the webhook's body and `outbox list --json`): RFC 3339 UTC times.
    public func json() throws -> Data {
        try ActionOutbox.encoder.encode(self)
    }
}
