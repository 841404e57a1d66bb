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

    /// A report written whole into a hidden folder beside its final place, not yet published.
    public struct WrittenReport: Sendable {
        /// The hidden folder holding every file (`.run-<id>.partial`).
        public let aside: String
        /// Where ``ReportWriter/publish(_:)`` puts it (`run-<id>`).
        public let directory: String
    }

    /// Writes every file of a run's report into a hidden folder beside its final place, taking
    /// the findings from `findings`, which calls its argument once per finding in report order.
    /// Nothing appears under the run's name until ``publish(_:)``, which the job calls only once
    /// the run is recorded as finished: a killed run leaves no report folder, and a report never
    /// says `completed` for a run the database calls `failed`.
    ///
    /// A finding that is not new is written from its rows rendered ahead when it brings them
    /// (`RunReport.Finding.rendered`); `rendered`, when given, sees each finding's rows as a
    /// finding that is not new, for those it had to render (`ReportRowCache`).
    public func writeAside(
        _ report: RunReport, findings: (_ each: (RunReport.Finding) throws -> Void) throws -> Void
    ) throws -> WrittenReport {
        try writeAside(report, findings: findings, rendered: nil)
    }

    func writeAside(
        _ report: RunReport, findings: (_ each: (RunReport.Finding) throws -> Void) throws -> Void,
        rendered: ((RunReport.Finding, ReportFormat.RenderedRows) -> Void)?
    ) throws -> WrittenReport {
        let rootURL = URL(fileURLWithPath: root)
        let directory = rootURL.appendingPathComponent("run-\(report.runID)")
        let aside = rootURL.appendingPathComponent(Self.asideName(runID: report.runID))
        try FileManager.default.createDirectory(at: rootURL, withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: aside.path) { try FileManager.default.removeItem(at: aside) }
        try FileManager.default.createDirectory(at: aside, withIntermediateDirectories: false)
        do {
            let files = try ReportFormat.allCases.map {
                (format: $0, output: try PartialFile(aside.appendingPathComponent($0.fileName)))
            }
            for file in files { try file.output.write(file.format.header(report, reader: reader)) }
            var index = 0
            try findings { finding in
                // A finding that is not new is written from its rows as the cache keeps them, the
                // same text its own rendering gives (QuietNightTests compare the two reports).
                let rows = finding.isNew ? nil : finding.rendered ?? ReportFormat.RenderedRows(finding, reader: reader)
                for file in files {
                    try file.output.write(
                        rows.map { file.format.row($0, index: index) }
                            ?? file.format.row(finding, index: index, reader: reader))
                }
                if let rendered, finding.rendered == nil {
                    rendered(finding, rows ?? ReportFormat.RenderedRows(finding, reader: reader))
                }
                index += 1
            }
            Failpoint.pass("report.write")
            for file in files { try file.output.write(file.format.footer(report, reader: reader)) }
            for file in files { try file.output.commit() }
        } catch {
            try? FileManager.default.removeItem(at: aside)
            throw error
        }
        return WrittenReport(aside: aside.path, directory: directory.path)
    }

    /// Renames a report written aside to its final name (one `rename`: it appears whole).
    @discardableResult
    public func publish(_ written: WrittenReport) throws -> String {
        if FileManager.default.fileExists(atPath: written.directory) {
            try FileManager.default.removeItem(atPath: written.directory)
        }
        try FileManager.default.moveItem(atPath: written.aside, toPath: written.directory)
        return written.directory
    }

    /// Writes and publishes a run's report at once; returns the run's folder.
    @discardableResult
    public func write(
        _ report: RunReport, findings: (_ each: (RunReport.Finding) throws -> Void) throws -> Void
    ) throws -> String {
        try publish(writeAside(report, findings: findings))
    }

    /// What a killed run left in the root: a report written aside for a run that was recorded as
    /// finished (killed between the two) is published; any other is deleted.
    public func tidy(isFinished: (Int64) throws -> Bool) throws {
        let rootURL = URL(fileURLWithPath: root)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: rootURL.path) else { return }
        for name in names where name.hasPrefix(".run-") && name.hasSuffix(".partial") {
            let aside = rootURL.appendingPathComponent(name)
            guard let id = Int64(name.dropFirst(".run-".count).dropLast(".partial".count)) else { continue }
            let directory = rootURL.appendingPathComponent("run-\(id)")
            if try isFinished(id), !FileManager.default.fileExists(atPath: directory.path) {
                try FileManager.default.moveItem(at: aside, to: directory)
            } else {
                try FileManager.default.removeItem(at: aside)
            }
        }
    }

    static func asideName(runID: Int64) -> String { ".run-\(runID).partial" }

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

    /// Quotes a CSV field, and defuses spreadsheet formulas (user and product ids come from
    /// clients): see ``CSVText/field(_:)``.
    public static func csvField(_ value: String) -> String { CSVText.field(value) }
}
