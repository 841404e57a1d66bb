import Foundation
import Postgres
@testable import Reconciliation

extension MultiNightWorld {
    /// The kept rows' inputs digests (`reconcile.report_rows.inputs`) by item, before a night.
    func keptInputs() throws -> [Int64: String] {
        var kept: [Int64: String] = [:]
        for row in try connection.query(
            "SELECT review_item_id, encode(inputs, 'hex') FROM reconcile.report_rows WHERE inputs IS NOT NULL")
        {
            kept[try row.decode(Int64.self, at: 0)] = try row.decode(String.self, at: 1)
        }
        return kept
    }

    /// Every night's report lists each finding as a run rendering every row would
    /// (`ReportRowsCheck`), whether its rows were rendered or kept from an earlier night. `before`
    /// is `keptInputs()` before the night: an item the night judged again, not new, whose kept
    /// row's digest is the one it had then was written from that row.
    func reportRowProblems(_ report: RunReport, reader: Reader, before: [Int64: String]) throws -> [String] {
        let (problems, compared) = try ReportRowsCheck.problems(report, reader: reader, on: connection)
        coverage["report rows compared with their items", default: 0] += compared
        var written = 0
        for row in try connection.query(
            """
            SELECT c.review_item_id, encode(c.inputs, 'hex') FROM reconcile.report_rows c
              JOIN reconcile.review_items r ON r.id = c.review_item_id
             WHERE r.last_seen_run = $1 AND r.first_seen_run < $1 AND c.inputs IS NOT NULL
            """, [report.runID])
        where before[try row.decode(Int64.self, at: 0)] == (try row.decode(String.self, at: 1)) {
            written += 1
        }
        coverage["kept rows written for items judged again", default: 0] += written
        return problems
    }
}
