import AppStore
import Foundation
import Logging
import Postgres

/// `reconcile notifications sync` (SPEC section 14): asks Get Notification History for the span
/// since the last sync, stores every record in `reconcile.notification_history`, verifies it like
/// any notification and takes each notificationUUID into account once whatever brought it; then,
/// when enabled, answers Apple's refund requests (``ConsumptionAnswerer``). A run does the same
/// first; the transactions the records carry enter the white table in a run
/// (``NotificationApplier``), so that the diff sees them.
public struct NotificationHistorySync: Sendable {
    /// What one sync did.
    public struct Summary: Sendable, Equatable {
        /// Pages Apple returned.
        public var pages = 0
        /// Records Apple returned.
        public var fetched = 0
        /// Records not stored before.
        public var stored = 0
        /// Of those, records whose last send attempt failed: the app's endpoint missed them.
        public var undelivered = 0
        /// Of those, records that did not verify.
        public var invalid = 0
        /// Set when Apple could not answer: the next sync asks for the same span again.
        public var unanswered: String?
        /// The refund requests answered.
        public var consumption = ConsumptionAnswerer.Summary()

        public init() {}
    }

    /// One sync at a time per database, whether hourly from cron or at the start of a run.
    public static let lockKey: Int64 = 0x6961_7072_6563_0014
    /// A new sync starts this much before the last one ended: Apple files a notification it
    /// retries under its first attempt's date.
    public static let overlap: TimeInterval = 3600

    let client: AppStoreServerAPIClient
    let settings: Settings
    let verify: @Sendable (String) async -> NotificationVerdict
    let logger: Logger

    /// Creates a sync over a Server API client; `verify` verifies a signed payload.
    public init(
        client: AppStoreServerAPIClient, settings: Settings, verify: @escaping @Sendable (String) async -> NotificationVerdict,
        logger: Logger
    ) {
        self.client = client
        self.settings = settings
        self.verify = verify
        self.logger = logger
    }

    /// Syncs from `since` (nil: from where the last completed sync ended, else as far back as
    /// Apple keeps: 180 days in production, 30 in sandbox) to now, then, `answering`, answers
    /// refund requests. Returns nil when another sync holds the lock.
    public func sync(
        since: Date? = nil, runID: Int64? = nil, now: Date = Date(), answering: Bool = true, on connection: Connection
    ) async throws -> Summary? {
        guard try connection.tryAdvisoryLock(Self.lockKey) else { return nil }
        defer { _ = try? connection.advisoryUnlock(Self.lockKey) }
        let environment = settings.environment.apple
        let kept: TimeInterval = (environment == .production ? 180 : 30) * 86_400
        let last = try connection.queryFirst(SQL.syncLast, ["environment": environment.rawValue])?
            .decode(Date?.self, at: 0)
        // Apple refuses a start older than what it keeps.
        let start = max(since ?? last.map { $0.addingTimeInterval(-Self.overlap) } ?? .distantPast,
                        now.addingTimeInterval(-kept + 60))
        let syncID = try connection.query(
            SQL.syncStart, ["environment": environment.rawValue, "since": start, "until": now, "run_id": runID]
        )[0].decode(Int64.self, at: 0)
        var summary = Summary()
        let outcome: ServerAPIOutcome<Int>
        do {
            outcome = try await client.notificationHistory(
                NotificationHistoryRequest(startDate: start, endDate: now), environment: environment, logger: logger
            ) { records in
                try await store(records, syncID: syncID, runID: runID, on: connection, into: &summary)
            }
        } catch let error as ServerAPIConfigurationError {
            try finish(syncID, summary, error: "\(error)", on: connection)
            throw RunConfigurationError("\(error)")
        }
        switch outcome {
        case .found(let pages):
            summary.pages = pages
            try finish(syncID, summary, error: nil, on: connection)
        case .notFound:
            summary.unanswered = "Get Notification History answered not found"
        case .rejected(_, let reason), .retryLater(let reason, _, _):
            summary.unanswered = reason.escapingNUL
        case .unverifiable(let failure):
            summary.unanswered = failure.description.escapingNUL
        }
        if let reason = summary.unanswered {
            try finish(syncID, summary, error: reason, on: connection)
            logger.warning("notification history not available now", metadata: ["reason": "\(reason)"])
        }
        if answering, settings.consumption.enabled {
            summary.consumption = try await ConsumptionAnswerer(client: client, settings: settings, logger: logger)
                .answerPending(now: now, on: connection)
        }
        logger.info("notification history synced", metadata: [
            "notifications.fetched": "\(summary.fetched)", "notifications.stored": "\(summary.stored)",
            "notifications.undelivered": "\(summary.undelivered)",
            "consumption.answered": "\(summary.consumption.answered)",
            "consumption.expired": "\(summary.consumption.expired)",
        ])
        return summary
    }

    /// A run's `notification_sync` stage: the same sync, recorded against the run, without the
    /// answers: the run sends those beside its stages, outside the run lock
    /// (``ReconciliationJob``), since each may wait a call's whole retry budget on Apple.
    func sync(_ run: RunContext) async throws -> Summary? {
        try await sync(runID: run.id, answering: false, on: run.connection)
    }

    /// Stores one page in one transaction: a record seen before only refreshes its send attempts.
    private func store(
        _ records: [NotificationHistoryRecord], syncID: Int64, runID: Int64?, on connection: Connection,
        into summary: inout Summary
    ) async throws {
        var verdicts: [(NotificationHistoryRecord, String, NotificationVerdict)] = []
        for record in records {
            guard let payload = record.signedPayload else { continue }
            verdicts.append((record, payload, await verify(payload)))
        }
        summary.fetched += records.count
        let encoder = AppStoreJSON.encoder()
        try connection.transaction {
            for (record, payload, verdict) in verdicts {
                let attempts = String(decoding: try encoder.encode(record.sendAttempts ?? []), as: UTF8.self)
                let last = record.sendAttempts?.last?.sendAttemptResult
                let rows = try connection.query(SQL.historyStore, [
                    "payload": payload.escapingNUL, "send_attempts": attempts, "last_send_result": last,
                    "sync_id": syncID, "run_id": runID,
                ])
                guard try rows[0].decode(Bool.self, at: 1) else { continue }
                let id = try rows[0].decode(Int64.self, at: 0)
                summary.stored += 1
                if last != SendAttempt.success { summary.undelivered += 1 }
                switch verdict {
                case .invalid(let reason):
                    summary.invalid += 1
                    try connection.execute(SQL.historyInvalid, ["id": id, "error": reason.escapingNUL])
                case .verified(let uuid, let type, let subtype, let signedDate, let transaction):
                    let first = try NotificationLedger.claim(
                        [.init(
                            sourceID: id, uuid: uuid, type: type, subtype: subtype, signedDate: signedDate,
                            transaction: transaction)],
                        source: "history", on: connection)[0]
                    try connection.execute(SQL.historyVerified, [
                        "id": id, "state": first ? (transaction == nil ? "applied" : "accepted") : "duplicate",
                        "uuid": uuid, "type": type.rawValue, "subtype": subtype, "transaction_id": transaction?.transactionID,
                        "signed_date": signedDate,
                    ])
                }
            }
        }
    }

    private func finish(_ syncID: Int64, _ summary: Summary, error: String?, on connection: Connection) throws {
        try connection.execute(SQL.syncFinish, [
            "id": syncID, "status": error == nil ? "completed" : "failed", "pages": summary.pages,
            "fetched": summary.fetched, "stored": summary.stored, "undelivered": summary.undelivered, "error": error,
        ])
    }
}

extension ServerAPILookups {
    /// A Notification History sync over this run's Server API client.
    public func notificationSync(_ applier: NotificationApplier) -> NotificationHistorySync {
        NotificationHistorySync(client: client, settings: settings, verify: applier.verify, logger: logger)
    }
}

/// What report.json says about notifications and refund requests since the previous run.
public enum RefundActivity {
    /// `"notifications": {"synced", "undelivered"}`.
    public struct Notifications: Sendable, Equatable {
        /// Records Get Notification History syncs stored.
        public var synced = 0
        /// Of those, records whose last send attempt failed: the sign of a broken endpoint.
        public var undelivered = 0
        public init() {}
    }

    /// `"consumption": {"answered", "expired", "refunded", "declined"}`.
    public struct Consumption: Sendable, Equatable {
        public var answered = 0
        public var expired = 0
        public var refunded = 0
        public var declined = 0
        public init() {}
    }

    /// Counts since the end of the run's last finished run (`resumesAfter`; everything when none).
    static func since(_ run: RunContext) throws -> (Notifications, Consumption) {
        let row = try run.connection.query(NotificationHistorySync.SQL.sinceRun, ["resumes_after": run.resumesAfter])[0]
        var notifications = Notifications()
        notifications.synced = try row["synced"]
        notifications.undelivered = try row["undelivered"]
        var consumption = Consumption()
        consumption.answered = try row["answered"]
        consumption.expired = try row["expired"]
        consumption.refunded = try row["refunded"]
        consumption.declined = try row["declined"]
        return (notifications, consumption)
    }
}

extension RefundActivity.Notifications {
    /// The placeholders of `report.notifications_line`.
    var catalogValues: [String: String] { ["synced": String(synced), "undelivered": String(undelivered)] }
}

extension RefundActivity.Consumption {
    /// The placeholders of `report.consumption_line`.
    var catalogValues: [String: String] {
        ["answered": String(answered), "expired": String(expired), "refunded": String(refunded),
         "declined": String(declined)]
    }
}

extension RunReport {
    /// Whether report.md and report.html show the notifications and refund requests section:
    /// only when a sync stored a record or a refund request was seen since the previous run.
    var hasRefundActivity: Bool {
        notifications != RefundActivity.Notifications() || consumption != RefundActivity.Consumption()
    }
}

extension NotificationHistorySync {
    /// The statements, in `sql/notifications/`.
    enum SQL {
        static let syncLast: SQLFile = "notifications/sync_last.sql"
        static let syncStart: SQLFile = "notifications/sync_start.sql"
        static let historyStore: SQLFile = "notifications/history_store.sql"
        static let historyInvalid: SQLFile = "notifications/history_invalid.sql"
        static let historyVerified: SQLFile = "notifications/history_verified.sql"
        static let syncFinish: SQLFile = "notifications/sync_finish.sql"
        static let sinceRun: SQLFile = "notifications/since_run.sql"
    }
}
