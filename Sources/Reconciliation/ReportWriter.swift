import Foundation

/// Writes `DIR/run-<id>/report.json`, `report.md`, `report.html` and `review.csv`.
///
/// The summary comes first and the findings stream through: each file is written as a header,
/// one piece per finding and a footer, so a report of millions of findings takes no more
/// memory than one of ten.
public struct ReportWriter: Sendable {
    /// The report root (`RECONCILE_REPORT_DIR` or `--report-dir`).
    public let root: String

    /// Who reads `report.md` and `report.html`: `RECONCILE_LANGUAGE` and `RECONCILE_TIME_ZONE`.
    public let reader: Reader

    /// Creates a writer under a root folder.
    public init(root: String, reader: Reader = .standard) {
        self.root = root
        self.reader = reader
    }

    /// Writes every file of a run's report, taking the findings from `findings`, which calls its
    /// argument once per finding in report order; returns the run's folder. Files are written
    /// under a temporary name and renamed, so a reader never sees half a report.
    @discardableResult
    public func write(
        _ report: RunReport, findings: (_ each: (RunReport.Finding) throws -> Void) throws -> Void
    ) throws -> String {
        let directory = URL(fileURLWithPath: root).appendingPathComponent("run-\(report.runID)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = try ReportFormat.allCases.map {
            (format: $0, output: try PartialFile(directory.appendingPathComponent($0.fileName)))
        }
        do {
            for file in files { try file.output.write(file.format.header(report, reader: reader)) }
            var index = 0
            try findings { finding in
                for file in files { try file.output.write(file.format.row(finding, index: index, reader: reader)) }
                index += 1
            }
            Failpoint.pass("report.write")
            for file in files { try file.output.write(file.format.footer(report, reader: reader)) }
            for file in files { try file.output.commit() }
        } catch {
            for file in files { file.output.abandon() }
            throw error
        }
        return directory.path
    }

    /// Writes a report whose findings are in memory.
    @discardableResult
    public func write(_ report: RunReport, findings: [RunReport.Finding]) throws -> String {
        try write(report) { each in try findings.forEach(each) }
    }

    /// `report.json`, exactly the shape of SPEC section 10.
    public static func json(_ report: RunReport, findings: [RunReport.Finding]) -> String {
        ReportFormat.json.text(report, findings)
    }

    /// `report.md`: the summary a person reads first.
    public static func markdown(
        _ report: RunReport, findings: [RunReport.Finding], reader: Reader = .standard
    ) -> String {
        ReportFormat.markdown.text(report, findings, reader: reader)
    }

    /// `report.html`: see ``ReportFormat/html``.
    public static func html(_ report: RunReport, findings: [RunReport.Finding], reader: Reader = .standard) -> String {
        ReportFormat.html.text(report, findings, reader: reader)
    }

    /// `review.csv`: one line per finding, safe to open in a spreadsheet.
    public static func csv(_ report: RunReport, findings: [RunReport.Finding]) -> String {
        ReportFormat.csv.text(report, findings)
    }

    /// Quotes a CSV field, and defuses spreadsheet formulas (user and product ids come from clients).
    public static func csvField(_ value: String) -> String {
        var text = value
        if let first = text.first, "=+-@\t\r".contains(first) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Formats milliunits as a decimal amount (`6000` → `6.000`).
    public static func formatMilli(_ amount: Int64) -> String {
        let sign = amount < 0 ? "-" : ""
        let magnitude = amount.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
