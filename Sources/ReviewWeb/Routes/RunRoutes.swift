import Foundation
import Hummingbird
import Reconciliation

/// The runs list and each run's `report.html`.
struct RunController: Sendable {
    let database: ReviewDatabase
    let sessions: SessionStore
    let pages: Pages

    func routes() -> RouteCollection<SignedInContext> {
        let routes = RouteCollection(context: SignedInContext.self)
        routes.get("/runs") { _, context in try await runsPage(context: context) }
        routes.get("/runs/:id/report") { _, context in try await report(context: context) }
        return routes
    }

    private func runsPage(context: SignedInContext) async throws -> Response {
        let session = context.session
        let reader = context.reader
        let t = reader.catalog
        let runs = try await database.read { try $0.runs(limit: 100) }
        let receiverRuns = try await database.lender.run { try ReceiverRun.recent(limit: 20, on: $0) }
        let tallies = try await database.lender.run {
            try PolicyTally.byRun(runs.map(\.id) + receiverRuns.map(\.id), on: $0)
        }
        // What the policies decided in a run, one line per rule (SPEC section 17).
        func policies(_ run: Int64) -> [String] {
            (tallies[run] ?? []).map { tally in
                tally.amounts.isEmpty
                    ? t.text("runs.policy_tally_no_value", ["rule": tally.rule, "count": String(tally.decided)])
                    : t.text("runs.policy_tally", [
                        "rule": tally.rule, "count": String(tally.decided), "amount": tally.amountText(reader),
                    ])
            }
        }
        let flash = await sessions.takeFlash(for: session.id)
        var page = RunsPage(
            runs: runs.map { run in
                RunsPage.Run(
                    id: run.id, status: run.status.rawValue, statusLabel: t.runStatus(run.status), dryRun: run.dryRun,
                    window: "\(run.since.map { reader.minute($0) } ?? t["runs.beginning"]) → \(reader.minute(run.until))",
                    started: reader.minute(run.startedAt), uploads: run.uploads, findings: run.findingsTotal,
                    newFindings: run.findingsNew,
                    reportHref: run.reportDirectory == nil ? nil : "/runs/\(run.id)/report", policies: policies(run.id))
            }, hasRuns: !runs.isEmpty)
        page.receiverPasses = receiverRuns.map {
            RunsPage.ReceiverPass(
                id: $0.id, started: reader.minute($0.startedAt), applied: $0.applied, judged: $0.judged,
                opened: $0.opened, policies: policies($0.id))
        }
        return pages.render(
            "runs", page, title: t["runs.title"], context: context, flash: flash.map { FlashView($0) }, tab: .runs)
    }

    /// A run's `report.html` as the job wrote it (only that file name, inside the run's own folder).
    /// It is in the language the job was configured with (`RECONCILE_LANGUAGE`), not the page's.
    private func report(context: SignedInContext) async throws -> Response {
        let t = context.catalog
        guard let id = context.parameters.get("id", as: Int64.self),
            let run = try await database.read({ try $0.run(id: id) }), let directory = run.reportDirectory
        else {
            return pages.errorPage(heading: t["error.no_report"], message: t["error.run_has_no_report"], context: context, status: .notFound)
        }
        let file = URL(fileURLWithPath: directory).appendingPathComponent("report.html")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            return pages.errorPage(
                heading: t["error.report_missing"], message: t.text("error.report_file_missing", ["id": String(id)]),
                context: context, status: .notFound)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8",
                // The report is self-contained: inline CSS and SVG only, nothing may load or run.
                .contentSecurityPolicy:
                    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; "
                    + "base-uri 'none'; form-action 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
