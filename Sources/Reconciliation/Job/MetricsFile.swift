import Foundation

/// Prometheus text-format metrics of one run, for node-exporter's textfile collector.
public enum MetricsFile {
    /// The metrics text for a finished run.
    public static func text(_ report: RunReport) -> String {
        var metrics = PrometheusText()
        metrics.add(
            "reconcile_run_info", "gauge", "The last run: its id and status.",
            [("run_id=\"\(report.runID)\",status=\"\(report.status)\",environment=\"\(report.environment.rawValue)\"", "1")])
        metrics.add(
            "reconcile_run_finished_timestamp_seconds", "gauge", "When the last run finished.",
            [("", String(Int(report.finishedAt.timeIntervalSince1970)))])
        metrics.add(
            "reconcile_run_success", "gauge", "1 when the last run completed (with or without unresolved uploads).",
            [("", report.status.isCompleted ? "1" : "0")])
        metrics.add(
            "reconcile_phase_duration_seconds", "gauge", "Duration of each phase of the last run.",
            report.timings.keys.sorted().map { ("phase=\"\($0)\"", String(format: "%.3f", report.timings[$0]!)) })
        metrics.add("reconcile_uploads", "gauge", "Uploads of the last run by verification outcome.", [
            ("outcome=\"verified\"", "\(report.verification.verified)"),
            ("outcome=\"invalid\"", "\(report.verification.invalid)"),
            ("outcome=\"retry\"", "\(report.verification.retry)"),
        ])
        metrics.add(
            "reconcile_apple_responses", "gauge", "Uploads of the last run by Apple status code.",
            report.verification.byAppleStatus.keys.sorted().map {
                ("status=\"\($0)\"", "\(report.verification.byAppleStatus[$0]!)")
            })
        let counts = report.counts
        metrics.add(
            "reconcile_findings_open", "gauge", "Open findings the last run detected, by kind.",
            FindingKind.allCases.map { ("kind=\"\($0.rawValue)\"", "\(counts[$0.rawValue] ?? 0)") })
        metrics.add(
            "reconcile_findings_new", "gauge", "Findings first detected by the last run.",
            [("", "\(report.newFindings)")])
        metrics.add(
            "reconcile_notifications", "gauge",
            "Notification History records stored since the previous run; undelivered: the app's endpoint missed them.",
            [
                ("state=\"synced\"", "\(report.notifications.synced)"),
                ("state=\"undelivered\"", "\(report.notifications.undelivered)"),
            ])
        metrics.add(
            "reconcile_consumption_answers", "gauge", "Refund requests since the previous run, by what became of them.",
            [
                ("outcome=\"answered\"", "\(report.consumption.answered)"),
                ("outcome=\"expired\"", "\(report.consumption.expired)"),
                ("outcome=\"refunded\"", "\(report.consumption.refunded)"),
                ("outcome=\"declined\"", "\(report.consumption.declined)"),
            ])
        return metrics.text
    }

    /// Writes the metrics atomically (the collector must never read half a file).
    public static func write(_ report: RunReport, to path: String) throws {
        try write(text: text(report), to: path)
    }

    /// Writes metrics text atomically.
    static func write(text: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid())")
        try Data(text.utf8).write(to: temporary)
        _ = try? FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: temporary, to: url)
    }
}

/// Prometheus text format, one metric (help, type, samples) after another.
struct PrometheusText {
    /// Labels as written between the braces (`kind="missed_delivery"`; empty for none), and the value.
    typealias Sample = (labels: String, value: String)

    private var lines: [String] = []

    mutating func add(_ name: String, _ type: String, _ help: String, _ samples: [Sample]) {
        lines.append("# HELP \(name) \(help)")
        lines.append("# TYPE \(name) \(type)")
        for sample in samples {
            lines.append("\(name)\(sample.labels.isEmpty ? "" : "{\(sample.labels)}") \(sample.value)")
        }
    }

    var text: String { lines.joined(separator: "\n") + "\n" }
}
