import Foundation
import Postgres
@testable import Reconciliation

extension MultiNightWorld {
    /// Every night's report lists each finding as a run rendering every row would
    /// (`ReportRowsCheck`), whether its rows were rendered or kept from an earlier night.
    func reportRowProblems(_ report: RunReport, reader: Reader) throws -> [String] {
        let (problems, compared) = try ReportRowsCheck.problems(report, reader: reader, on: connection)
        coverage["report rows compared with their items", default: 0] += compared
        // Rows kept from an earlier run for items this run judged again: written from the digest.
        coverage["kept rows written for items judged again", default: 0] += try connection.query(
            """
            SELECT count(*) FROM reconcile.report_rows c JOIN reconcile.review_items r ON r.id = c.review_item_id
             WHERE r.last_seen_run = $1 AND c.judged_run < $1
            """, [report.runID]
        )[0].decode(Int.self, at: 0)
        return problems
    }
}
