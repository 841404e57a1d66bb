import AsyncHTTPClient
import AppStore
import Foundation
import Logging
import NIOCore
import Postgres

/// After every run (SPEC section 19): measure, compare with the previous run's check, and queue
/// one message when a rule fires; then send what is queued. Neither step ever fails the run: a
/// check that fails is logged and the next run checks again; a message that is not taken stays
/// queued for the next run.
public enum RunAlerts {
    /// Measures run `report`'s alert facts, keeps them, and queues a message when `rules` fire
    /// on what is new since the previous check. `flagged` reads `reconcile insights`' flagged
    /// segments at the run's end (``flagged(until:settings:on:)``, an Insights computation over
    /// ``segmentSpanDays``): only when the `flagged_segment` rule watches them, or when a message
    /// goes out and names the top one. With the rule off, the check keeps the segments only of the
    /// checks that sent a message; the first check after the rule is turned on compares with those.
    /// Returns the queued alert's id.
    @discardableResult
    public static func check(
        _ report: RunReport, rules: AlertRules, settings: Settings, on connection: Connection,
        flagged: () throws -> [FlaggedSegment]
    ) throws -> Int64? {
        // Insights reads in a transaction of its own: the segments are read before the check's.
        var segments = rules.flaggedSegment ? try flagged() : nil
        var measures = try measure(report, flaggedSegments: (segments ?? []).map(\.name), on: connection)
        if segments == nil, !rules.fired(measures, since: try previousMeasures(before: report.runID, on: connection)).isEmpty {
            let read = try flagged()
            segments = read
            measures.flaggedSegments = read.map(\.name).sorted()
        }
        return try connection.transaction {
            let previous = try previousMeasures(before: report.runID, on: connection)
            let fired = rules.fired(measures, since: previous)
            // SPEC section 19: what fired, the counts, the top flagged segment, the value at risk.
            let summary = AlertMessage.Summary(
                openItems: report.openFindings, newFindings: report.newFindings, valueAtRisk: measures.valueAtRisk,
                topSegment: segments?.first)
            let message = fired.isEmpty ? nil : AlertMessage(
                runID: report.runID, fired: fired, summary: summary, reader: settings.reportReader,
                publicURL: settings.alerts.publicURL)
            let row = try connection.queryFirst(SQL.recordCheck, [
                "run_id": report.runID, "measures": try json(measures), "message": try message.map(json),
            ])
            return try row?.decode(Int64?.self, at: 1)
        }
    }

    /// The measures of the check before run `runID`'s, nil before the first.
    static func previousMeasures(before runID: Int64, on connection: Connection) throws -> AlertMeasures? {
        try connection.queryFirst(SQL.previousMeasures, ["run_id": runID]).map {
            try JSONDecoder().decode(AlertMeasures.self, from: Data(try $0.decode(String.self, at: 0).utf8))
        }
    }

    /// What the check compares: the run's new high findings, value at risk, Play's unacknowledged
    /// voids, Notification History's undelivered notifications and the uploads left to retry.
    static func measure(_ report: RunReport, flaggedSegments: [String], on connection: Connection) throws
        -> AlertMeasures
    {
        var measures = AlertMeasures()
        let high = FindingKind.allCases.filter { $0.severity == .high }.map(\.rawValue)
        measures.newHighFindings = try connection.queryFirst(
            SQL.newHighFindings, ["run_id": report.runID, "kinds": high])?.decode(Int.self, at: 0) ?? 0
        measures.valueAtRisk = RunReport.ValueAtRisk.totals(report.valueAtRisk)
        measures.flaggedSegments = flaggedSegments.sorted()
        measures.unacknowledgedVoids = report.play?.voidedUnacknowledged ?? 0
        measures.undeliveredNotifications = report.notifications.undelivered
        measures.uploads = report.verification.uploads
        measures.uploadsRetry = report.verification.retry
        return measures
    }

    /// The span whose flagged segments the `flagged_segment` rule watches: the last 30 days of
    /// purchases, long enough for a segment's leaks to pass the flag's five, short enough that a
    /// build fixed a month ago stops being news (and that the check stays a few statements over a
    /// month's purchases, whatever the history's size).
    public static let segmentSpanDays = 30

    /// A flagged segment as an alert names it.
    public struct FlaggedSegment: Sendable, Equatable, Codable {
        /// `dimension=value`.
        public var name: String
        public var leaks: Int
        public var purchases: Int
    }

    /// `reconcile insights`' flagged segments over ``segmentSpanDays`` up to `until`, every
    /// dimension, the most leaks first (the top one is the message's).
    public static func flagged(until: Date, settings: Settings, on connection: Connection) throws -> [FlaggedSegment] {
        let query = InsightsQuery(since: until.addingTimeInterval(-Double(segmentSpanDays) * 86_400), until: until)
        let flagged = try Insights.compute(query, settings: settings, on: connection).tables.flatMap { table in
            table.segments.filter(\.flagged).map {
                FlaggedSegment(name: "\(table.dimension.rawValue)=\($0.value)", leaks: $0.leaks, purchases: $0.purchases)
            }
        }
        // Stable: segments with as many leaks keep the dimensions' order.
        return flagged.sorted { $0.leaks > $1.leaks }
    }

    /// Queues the test message of `reconcile check --alert-test`.
    public static func queueTest(settings: Settings, on connection: Connection) throws -> Int64 {
        let message = AlertMessage(
            runID: nil, fired: [FiredAlert(rule: .test)], reader: settings.reportReader,
            publicURL: settings.alerts.publicURL)
        return try connection.query(SQL.enqueueTest, ["message": try json(message)])[0].decode(Int64.self, at: 0)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    enum SQL {
        static let previousMeasures: SQLFile = "alerts/previous_measures.sql"
        static let newHighFindings: SQLFile = "alerts/new_high_findings.sql"
        static let recordCheck: SQLFile = "alerts/record_check.sql"
        static let enqueueTest: SQLFile = "alerts/enqueue_test.sql"
        static let claim: SQLFile = "alerts/claim.sql"
        static let sent: SQLFile = "alerts/sent.sql"
        static let failed: SQLFile = "alerts/failed.sql"
    }
}

/// Sends the queued alerts to `RECONCILE_ALERT_WEBHOOK_URL`, oldest first, each at most
/// ``attempts`` times with one deadline per exchange (SPEC section 11); what is not taken stays
/// queued with its error for the next run. Redirects are not followed: a webhook that redirects,
/// answers garbage or a non-2xx status, or is down or slow, changes nothing but the alert's own
/// row.
public struct AlertDelivery: Sendable {
    public var settings: AlertSettings
    /// The deadline of one exchange, from connecting to the last byte of the answer.
    public var timeout: Duration = .seconds(10)
    public var attempts = 3
    public var backoff: Duration = .milliseconds(500)
    /// A pass claims no alert after this long.
    public var passBudget: Duration = .seconds(60)
    /// Alerts older than this many days are stale and no longer sent.
    public var keepDays = 7
    let logger: Logger

    /// What a pass did.
    public struct Outcome: Sendable, Equatable {
        public var sent = 0
        public var failed = 0
        /// The last failure's reason (never the URL, which holds the bot's token).
        public var lastError: String?
    }

    public init?(settings: Settings, logger: Logger) {
        guard settings.alerts.enabled else { return nil }
        self.settings = settings.alerts
        self.logger = logger
    }

    /// One pass over the queue of the settings' database when alerts are configured; nil when not.
    public static func deliverIfConfigured(settings: Settings, logger: Logger) async throws -> Outcome? {
        guard let delivery = AlertDelivery(settings: settings, logger: logger) else { return nil }
        return try await delivery.deliver(on: try settings.connect())
    }

    /// One pass over the queue.
    public func deliver(on connection: Connection, now: @Sendable () -> Date = Date.init) async throws -> Outcome {
        guard let url = settings.webhookURL?.value else { return Outcome() }
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            let outcome = try await deliver(to: url, http: http, on: connection, now: now)
            try await http.shutdown()
            return outcome
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    private func deliver(to url: String, http: HTTPClient, on connection: Connection, now: () -> Date) async throws
        -> Outcome
    {
        let clock = ContinuousClock()
        let ends = clock.now + passBudget
        let lease = (timeout + backoff * 4) * attempts
        var outcome = Outcome()
        var after: Int64 = 0
        while clock.now < ends {
            try Task.checkCancellation()
            guard let row = try connection.queryFirst(RunAlerts.SQL.claim, [
                "after": after, "lease_seconds": Double(lease.components.seconds), "keep_days": keepDays,
            ]) else { break }
            let id = try row.decode(Int64.self, at: 0)
            after = id
            var error: String?
            do {
                let message = try JSONDecoder().decode(AlertMessage.self, from: Data(try row.decode(String.self, at: 1).utf8))
                error = try await send(message, to: url, http: http, now: now)
            } catch is CancellationError {
                throw CancellationError()
            } catch let failure {
                error = "\(type(of: failure)): \(failure)"
            }
            if let error {
                try connection.execute(RunAlerts.SQL.failed, ["id": id, "error": error])
                outcome.failed += 1
                outcome.lastError = error
                logger.warning("alert not sent", metadata: ["alert.id": "\(id)", "error": "\(error)"])
            } else {
                try connection.execute(RunAlerts.SQL.sent, ["id": id])
                outcome.sent += 1
                logger.info("alert sent", metadata: ["alert.id": "\(id)", "alert.format": "\(settings.format.rawValue)"])
            }
        }
        return outcome
    }

    /// POSTs one message; nil when a 2xx took it, else why not.
    private func send(_ message: AlertMessage, to url: String, http: HTTPClient, now: () -> Date) async throws -> String? {
        var lastError: String?
        for attempt in 1...max(1, attempts) {
            if attempt > 1 { try await Task.sleep(for: backoff * (1 << (attempt - 2))) }
            // Made for each attempt: a signature's timestamp must be fresh.
            let (target, body) = try settings.format.request(message, url: url, secret: settings.secret, now: now())
            var request = HTTPClientRequest(url: target)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(bytes: body))
            do {
                guard let status = try await HTTPExchange.send(request, within: timeout, http: http) else {
                    lastError = "no whole answer within \(timeout)"
                    continue
                }
                if (200..<300).contains(status) { return nil }
                lastError = "HTTP \(status)"
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                lastError = "no whole answer within \(timeout)"
            } catch let error as HTTPClientError {
                // AsyncHTTPClient's errors name what failed, never the URL (whose path and query
                // hold the bot's token).
                lastError = "\(error)"
            } catch {
                // Other errors' text may name the URL: only the kind of failure.
                lastError = "\(type(of: error))"
            }
        }
        return lastError
    }
}
