import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// docs/architecture.md's derived parts are generated from the code and checked here: the psql
/// walk-through ("Running a stage by hand") is `DiffPlan.walkthrough`, and it runs in psql as
/// printed; the kinds' table is `FindingKind.markdown`.
@Suite("docs/architecture.md, generated parts")
struct DiffWalkthroughTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func block(_ marker: String) throws -> String {
        let text = try String(contentsOf: root.appending(path: "docs/architecture.md"), encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- \(marker):begin -->\n"), "no \(marker) block")
        let end = try #require(text.range(of: "<!-- \(marker):end -->"), "no \(marker) end")
        return String(text[begin.upperBound..<end.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theDocumentPrintsTheGeneratedWalkthrough() throws {
        let generated = try DiffPlan.walkthrough(DiffPlan.walkthroughParameters)
        #expect(
            try Self.block("walkthrough") == "```\n\(generated)\n```",
            "docs/architecture.md's walk-through is stale; paste:\n```\n\(generated)\n```")
    }

    @Test func theDocumentPrintsTheKindsContracts() throws {
        #expect(
            try Self.block("finding-kinds") == FindingKind.markdown,
            "docs/architecture.md's kinds table is stale; paste:\n\(FindingKind.markdown)")
    }

    /// Every value a file of the plan takes is one the runner binds: the walk-through's generator
    /// refuses a name it cannot set, so a file that starts reading a new value without the runner
    /// binding it fails here.
    @Test(arguments: [true, false])
    func everyValueTheFilesTakeIsBound(production: Bool) throws {
        var parameters = DiffPlan.walkthroughParameters
        parameters.environment = production ? .production : .sandbox
        let text = try DiffPlan.walkthrough(parameters)
        #expect(text.contains("findings/environment_mismatch.sql") == production)
        for file in DiffPlan.steps[.window]!.map(\.file) where file != DiffPlan.rules {
            #expect(text.contains("\\i sql/diff/\(file)"), "\(file) missing from the walk-through")
        }
    }

    /// The walk-through as printed, in psql, against a database with the job's schema and a
    /// purchase nobody delivered: every stage runs, and the missed delivery is found.
    @Test func theWalkthroughRunsInPsqlAsPrinted() throws {
        let (database, connection) = try TestDatabase.migrated("walkthrough")
        try connection.execute("""
            INSERT INTO reconcile.runs (id, status, window_since, window_until, environment)
            VALUES (41, 'completed', '2026-11-21 00:00:00+00', '2026-11-22 00:00:00+00', 'production'),
                   (42, 'running', '2026-11-22 00:00:00+00', '2026-11-23 02:30:00+00', 'production')
            """)
        try connection.execute("""
            INSERT INTO reconcile.apple_transactions (transaction_id, original_transaction_id, product_id, product_type,
                bundle_id, environment, purchase_date, quantity, source, last_seen_run)
            VALUES ('2000000000000001', '2000000000000001', 'gems.100', 'consumable', 'com.example.app', 'Production',
                '2026-11-22 10:00:00+00', 1, 'jws', 42)
            """)
        var lines = try DiffPlan.walkthrough(DiffPlan.walkthroughParameters).split(separator: "\n").map(String.init)
        let first = lines.removeFirst()
        #expect(first == "psql \"$DATABASE_URL\"")
        let rollback = lines.popLast()
        #expect(rollback == "ROLLBACK;")
        lines += ["SELECT kind FROM diff_findings ORDER BY kind;", "ROLLBACK;"]
        let psql = Process()
        psql.executableURL = URL(filePath: "/usr/bin/env")
        psql.arguments = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", database.url]
        psql.currentDirectoryURL = Self.root
        let input = Pipe(), output = Pipe(), errors = Pipe()
        psql.standardInput = input
        psql.standardOutput = output
        psql.standardError = errors
        try psql.run()
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaints = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        psql.waitUntilExit()
        #expect(psql.terminationStatus == 0, "psql failed: \(complaints)")
        #expect(complaints.isEmpty, "psql complained: \(complaints)")
        // The session stage prints the settings it made; the findings come last.
        #expect(printed.split(separator: "\n").last.map(String.init) == "missed_delivery", "\(printed) \(complaints)")
    }
}
