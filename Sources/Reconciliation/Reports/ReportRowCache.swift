import Foundation
import Postgres

/// The report's rows of the open items, kept in `reconcile.report_rows` (migration 0023) as the
/// run that last judged each item rendered them, so that a run carrying an item over unjudged
/// writes its rows without rendering them again: a quiet night lists thousands of open items in
/// four files, and rendering them was most of its time (docs/benchmarks.md, the ninth session).
///
/// A kept row is used only for the same `layout` (the reader, the schema's version and this
/// build), and for the item as the run that rendered it left it (its `last_seen_run`) or judged
/// again with the same inputs (a digest of everything its rows are rendered from, migration 0024:
/// the items about an upload are judged every night). Anything else is a miss, rendered and kept
/// again. At most ``limit`` rows are kept per run, so that memory stays
/// bounded whatever the number of findings; the rest are rendered again by the next run.
final class ReportRowCache {
    /// The most rows one run keeps (a few kilobytes each, held until the report is written).
    static let limit = 10_000

    /// What a kept row was rendered for.
    let layout: String
    private var rendered: [(itemID: Int64, judgedRun: Int64, rows: ReportFormat.RenderedRows)] = []

    init(reader: Reader) {
        layout = Self.layout(reader)
    }

    /// Notes the rows the writer rendered for a finding (`ReportWriter.writeAside`).
    func note(_ finding: RunReport.Finding, _ rows: ReportFormat.RenderedRows) {
        guard let itemID = finding.reviewItemID, let judgedRun = finding.judgedRun, rendered.count < Self.limit else {
            return
        }
        rendered.append((itemID, judgedRun, rows))
    }

    /// Keeps the rows noted, stamps those an item judged again still matches with the run that
    /// judged it, and forgets those of items the report no longer lists. Call after
    /// the report is streamed and before `ReportBuilder.discard` (it reads `report_findings`).
    func store(on connection: Connection) throws {
        try connection.transaction {
            if !rendered.isEmpty {
                try connection.execute(SQL.stage)
                try connection.copyIn(SQL.copy) { writer in
                    for row in rendered {
                        try writer.append([
                            row.itemID, row.judgedRun, row.rows.json, row.rows.markdown, row.rows.html, row.rows.csv,
                        ])
                    }
                }
                try connection.execute(SQL.store, ["layout": layout])
            }
            try connection.execute(SQL.restamp, ["layout": layout])
            try connection.execute(SQL.prune)
        }
        rendered = []
    }

    /// The reader's language and time zone, the schema's version and this build (its executable's
    /// size and time): a row rendered under any other is rendered again.
    static func layout(_ reader: Reader) -> String {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let attributes = (try? FileManager.default.attributesOfItem(atPath: executable)) ?? [:]
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return [
            reader.language.rawValue, reader.timeZone.identifier, "schema \(Schema.latestVersion)",
            "\(executable) \(size) \(modified)",
        ]
            .joined(separator: "\n")
    }

    /// The statements, in `sql/reports/`.
    enum SQL {
        static let stage: SQLFile = "reports/rows_stage.sql"
        static let copy: SQLFile = "reports/rows_copy.sql"
        static let store: SQLFile = "reports/rows_store.sql"
        static let restamp: SQLFile = "reports/rows_restamp.sql"
        static let prune: SQLFile = "reports/rows_prune.sql"
    }
}
