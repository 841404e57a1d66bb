import Foundation
import Postgres
import Synchronization

/// What the receiver's listener counted since the process started: refusals leave no row behind
/// (they are never stored), so they are counted here.
public final class ReceiverCounters: Sendable {
    private let counts = Mutex([String: Int]())

    public init() {}

    /// Counts one request by its outcome: `stored`, `duplicate`, `rejected`, `too_large`, `unavailable`;
    /// Google Play's pushes as ``PlayOutcome``s.
    public func count(_ outcome: String) {
        counts.withLock { $0[outcome, default: 0] += 1 }
    }

    /// The outcome of one Pub/Sub push to the Play path (the token never a label).
    public enum PlayOutcome: String, Sendable, CaseIterable {
        case stored, duplicate, forbidden, rejected, tooLarge = "too_large", unavailable
        /// Stored raw: its data is not a developer notification (counted beside `stored`).
        case undecodable
    }

    /// Counts one push to the Play path.
    public func count(play outcome: PlayOutcome) {
        count("play." + outcome.rawValue)
    }

    /// The counts so far.
    public var snapshot: [String: Int] { counts.withLock { $0 } }
}

/// The receiver's metrics file (`--metrics-file`, Prometheus text for node-exporter's textfile
/// collector): notifications received by type, refused, forwarded and failing; how long refund
/// requests waited for their answer; review items the receiver opened since the last nightly run.
public enum ReceiverMetrics {
    /// The metrics text now.
    public static func text(counters: ReceiverCounters, lastPass: Date, on connection: Connection) throws -> String {
        let samples = try connection.query(ReceiverSQL.metrics).map {
            (metric: try $0.decode(String.self, at: 0), label: try $0.decode(String.self, at: 1),
             value: try $0.decode(Double.self, at: 2))
        }
        var metrics = PrometheusText()
        func from(_ name: String, label: String) -> [PrometheusText.Sample] {
            samples.filter { $0.metric == name }.map {
                (label.isEmpty ? "" : "\(label)=\"\(escaped($0.label))\"", number($0.value))
            }
        }
        metrics.add(
            "reconcile_receiver_notifications", "gauge", "Notifications the receiver stored, by notificationType.",
            from("received", label: "type"))
        let counts = counters.snapshot
        metrics.add(
            "reconcile_receiver_requests_total", "counter", "POSTs since the receiver started, by outcome.",
            ["stored", "duplicate", "rejected", "too_large", "unavailable"].map {
                ("outcome=\"\($0)\"", "\(counts[$0] ?? 0)")
            })
        metrics.add(
            "reconcile_receiver_play_requests_total", "counter",
            "Google Play's Pub/Sub pushes since the receiver started, by outcome (undecodable: stored raw, its data not a developer notification).",
            ReceiverCounters.PlayOutcome.allCases.map { ("outcome=\"\($0.rawValue)\"", "\(counts["play." + $0.rawValue] ?? 0)") })
        let play = try connection.query(PlayReceiverSQL.metrics).map { row -> PrometheusText.Sample in
            let kind = try row.decode(String.self, "kind"), state = try row.decode(String.self, "state")
            return ("kind=\"\(escaped(kind))\",state=\"\(escaped(state))\"", number(try row.decode(Double.self, "value")))
        }
        metrics.add(
            "reconcile_receiver_play_notifications", "gauge",
            "Google Play notifications stored, by kind and by what asking Google came to (pending: not yet asked).",
            play)
        metrics.add(
            "reconcile_receiver_forwards", "gauge",
            "Copies for the app's endpoint: forwarded, failing (tried, not yet delivered), waiting.",
            from("forwards", label: "state"))
        metrics.add(
            "reconcile_receiver_consumption_answer_seconds", "gauge",
            "Seconds from a refund request's arrival to its answer, over the last day.",
            from("consumption_answer_seconds", label: "quantile"))
        metrics.add(
            "reconcile_receiver_items_opened_since_nightly", "gauge",
            "Review items the receiver opened since the last nightly run.",
            from("items_opened_since_nightly", label: ""))
        metrics.add(
            "reconcile_receiver_last_pass_timestamp_seconds", "gauge", "When the receiver's worker last passed.",
            [("", String(Int(lastPass.timeIntervalSince1970)))])
        return metrics.text
    }

    /// Writes the metrics file atomically.
    public static func write(to path: String, counters: ReceiverCounters, on connection: Connection) throws {
        try MetricsFile.write(text: text(counters: counters, lastPass: Date(), on: connection), to: path)
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.3f", value)
    }

    /// A label value as Prometheus reads it: backslash, quote and newline escaped.
    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
