import Foundation

/// When a run's alert goes out (SPEC section 19): the policy file's `alerts:` section, or the
/// defaults when it has none. A rule fires on what is new since the previous run's check: a count
/// that does not grow, or a segment that stays flagged, is not sent again.
public struct AlertRules: Sendable, Equatable {
    /// `new_high_findings: N`: the run opened at least N new findings of high severity.
    public var newHighFindings: Int?
    /// `value_at_risk: {CNY: 5000}`: the open items' value at risk in a currency reached the amount
    /// (milliunits here) and grew since the previous check.
    public var valueAtRisk: [String: Int64]?
    /// `flagged_segment: true`: a segment of `reconcile insights` is flagged that was not at the
    /// previous check.
    public var flaggedSegment = false
    /// `unacknowledged_voids: N`: Google refunded at least N purchases for want of an
    /// acknowledgement since the previous run.
    public var unacknowledgedVoids: Int?
    /// `undelivered_notifications: N`: Notification History holds at least N notifications Apple
    /// could not deliver, newly seen by the run.
    public var undeliveredNotifications: Int?
    /// `uploads_retry: 0.05`: at least this share of the run's uploads were left to retry, and
    /// more of them than at the previous check.
    public var uploadsRetryShare: Double?

    public init(
        newHighFindings: Int? = nil, valueAtRisk: [String: Int64]? = nil, flaggedSegment: Bool = false,
        unacknowledgedVoids: Int? = nil, undeliveredNotifications: Int? = nil, uploadsRetryShare: Double? = nil
    ) {
        self.newHighFindings = newHighFindings
        self.valueAtRisk = valueAtRisk
        self.flaggedSegment = flaggedSegment
        self.unacknowledgedVoids = unacknowledgedVoids
        self.undeliveredNotifications = undeliveredNotifications
        self.uploadsRetryShare = uploadsRetryShare
    }

    /// Without an `alerts:` section: any new high finding, any newly flagged segment, any
    /// unacknowledged void, any undelivered notification.
    public static let defaults = AlertRules(
        newHighFindings: 1, flaggedSegment: true, unacknowledgedVoids: 1, undeliveredNotifications: 1)

    /// The keys of the `alerts:` section.
    static let keys = [
        "new_high_findings", "value_at_risk", "flagged_segment", "unacknowledged_voids", "undelivered_notifications",
        "uploads_retry",
    ]

    /// Each rule in force, as `reconcile policy check` prints it (English, as the CLI is).
    public var summary: [String] {
        var lines: [String] = []
        if let count = newHighFindings { lines.append("new high findings >= \(count)") }
        for (currency, milli) in (valueAtRisk ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("value at risk >= \(Money(milli: milli, currency: currency).text()), growing")
        }
        if flaggedSegment { lines.append("a newly flagged segment") }
        if let count = unacknowledgedVoids { lines.append("Play voids for want of an acknowledgement >= \(count)") }
        if let count = undeliveredNotifications { lines.append("undelivered notifications >= \(count)") }
        if let share = uploadsRetryShare { lines.append("uploads left to retry >= \(share * 100)% of the run's, growing") }
        return lines
    }

    /// What fired, given this run's measures and the previous check's (nil: none before).
    public func fired(_ now: AlertMeasures, since previous: AlertMeasures?) -> [FiredAlert] {
        var fired: [FiredAlert] = []
        if let threshold = newHighFindings, now.newHighFindings >= threshold {
            fired.append(.init(rule: .newHighFindings, count: now.newHighFindings))
        }
        for (currency, threshold) in (valueAtRisk ?? [:]).sorted(by: { $0.key < $1.key }) {
            let amount = now.valueAtRisk[currency] ?? 0
            let before = previous?.valueAtRisk[currency]
            if amount >= threshold, amount > (before ?? Int64.min) {
                fired.append(.init(rule: .valueAtRisk, currency: currency, amountMilli: amount, previousMilli: before))
            }
        }
        if flaggedSegment {
            let new = now.flaggedSegments.filter { !(previous?.flaggedSegments ?? []).contains($0) }
            if !new.isEmpty { fired.append(.init(rule: .flaggedSegment, count: new.count, segments: new)) }
        }
        if let threshold = unacknowledgedVoids, now.unacknowledgedVoids >= threshold {
            fired.append(.init(rule: .unacknowledgedVoids, count: now.unacknowledgedVoids))
        }
        if let threshold = undeliveredNotifications, now.undeliveredNotifications >= threshold {
            fired.append(.init(rule: .undeliveredNotifications, count: now.undeliveredNotifications))
        }
        if let share = uploadsRetryShare, now.uploads > 0,
           Double(now.uploadsRetry) / Double(now.uploads) >= share, now.uploadsRetry > (previous?.uploadsRetry ?? 0)
        {
            fired.append(.init(rule: .uploadsRetry, count: now.uploadsRetry, of: now.uploads))
        }
        return fired
    }
}

/// What a run's alert check measures, kept per run (`reconcile.alert_checks`) so that the next
/// check knows what is new.
public struct AlertMeasures: Sendable, Equatable, Codable {
    /// Findings of high severity the run opened.
    public var newHighFindings = 0
    /// The open items' value at risk by currency, in milliunits, at the run's end.
    public var valueAtRisk: [String: Int64] = [:]
    /// Flagged segments as `dimension=value`.
    public var flaggedSegments: [String] = []
    /// Google Play purchases first seen voided for want of an acknowledgement (`voidedReason` 8).
    public var unacknowledgedVoids = 0
    /// Notifications Notification History says Apple could not deliver.
    public var undeliveredNotifications = 0
    /// The run's uploads, and those left to retry.
    public var uploads = 0
    public var uploadsRetry = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case newHighFindings = "new_high_findings", valueAtRisk = "value_at_risk", flaggedSegments = "flagged_segments"
        case unacknowledgedVoids = "unacknowledged_voids", undeliveredNotifications = "undelivered_notifications"
        case uploads, uploadsRetry = "uploads_retry"
    }
}

/// One rule that fired, with the numbers the message says.
public struct FiredAlert: Sendable, Equatable, Codable {
    public enum Rule: String, Sendable, Codable, CaseIterable {
        case newHighFindings = "new_high_findings"
        case valueAtRisk = "value_at_risk"
        case flaggedSegment = "flagged_segment"
        case unacknowledgedVoids = "unacknowledged_voids"
        case undeliveredNotifications = "undelivered_notifications"
        case uploadsRetry = "uploads_retry"
        /// `reconcile check --alert-test`.
        case test
    }

    public var rule: Rule
    public var count: Int?
    /// `uploads_retry`: the run's uploads.
    public var of: Int?
    public var currency: String?
    public var amountMilli: Int64?
    public var previousMilli: Int64?
    public var segments: [String]?

    public init(
        rule: Rule, count: Int? = nil, of: Int? = nil, currency: String? = nil, amountMilli: Int64? = nil,
        previousMilli: Int64? = nil, segments: [String]? = nil
    ) {
        self.rule = rule
        self.count = count
        self.of = of
        self.currency = currency
        self.amountMilli = amountMilli
        self.previousMilli = previousMilli
        self.segments = segments
    }

    enum CodingKeys: String, CodingKey {
        case rule, count, of, currency, amountMilli = "amount_milli", previousMilli = "previous_milli", segments
    }

    /// As the `json` format's `fired` list carries it.
    var json: [String: Any] {
        var json: [String: Any] = ["rule": rule.rawValue]
        json["count"] = count
        json["of"] = of
        json["currency"] = currency
        json["amount_milli"] = amountMilli
        json["previous_milli"] = previousMilli
        json["segments"] = segments
        return json
    }
}
