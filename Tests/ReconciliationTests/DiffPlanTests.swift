import Foundation
@testable import Reconciliation
import Testing

/// The diff's plan is data: every step names a file that exists, every stage file is in a plan
/// or run by name elsewhere, and docs/architecture.md shows exactly the plan.
@Suite("The diff's plan")
struct DiffPlanTests {
    @Test func everyStepIsAFileAndEveryStageFileIsPlannedOrRunByName() throws {
        var planned: Set<String> = []
        for scope in DiffPlan.Scope.allCases {
            let steps = try #require(DiffPlan.steps[scope], "no plan for \(scope)")
            #expect(steps.first?.file == "00_session.sql")
            for step in steps where step.file != DiffPlan.rules {
                #expect(DiffSQL.stages[step.file] != nil, "\(scope): no sql/diff/\(step.file)")
                planned.insert(step.file)
            }
        }
        let runByName: Set<String> = [
            "01_judged_inputs.sql", "80_queue_reopen.sql", "81_queue_upsert.sql", "82_queue_auto_resolve.sql",
            "90_picture.sql", "91_picture_details.sql", "checks/usernames_unresolved.sql", "checks/scope_size.sql",
            "checks/by_index_on.sql", "checks/by_index_off.sql", "checks/work_tables.sql",
        ]
        let files = Set(DiffSQL.paths.filter { !$0.hasPrefix("findings/") })
        #expect(files.subtracting(planned).subtracting(runByName).sorted() == [], "stage files no plan runs")
        #expect(runByName.subtracting(files).sorted() == [], "named files that do not exist")
    }

    @Test func eachScopeFillsTheScopeItsOwnWay() {
        func scopeFiles(_ scope: DiffPlan.Scope) -> [String] {
            DiffPlan.steps[scope]!.map(\.file).filter { $0.hasPrefix("scope/") && $0 != "scope/tables.sql" && $0 != "scope/families.sql" }
        }
        #expect(scopeFiles(.window) == [
            "scope/touched_by_run.sql", "scope/window.sql", "scope/ledger_changes.sql", "scope/changed_bindings.sql",
        ])
        #expect(scopeFiles(.wholeHistory) == ["scope/touched_by_run.sql", "scope/whole_history.sql"])
        #expect(scopeFiles(.transactions) == ["scope/transactions.sql"])
        // After the scope, every plan judges alike.
        let judging = DiffPlan.Scope.allCases.map { scope in
            Array(DiffPlan.steps[scope]!.drop { $0.file != "scope/families.sql" })
        }
        #expect(judging.allSatisfy { $0 == judging[0] && !$0.isEmpty })
    }

    /// The work tables outlive a diff, and a runner that finds `diff_findings` skips every
    /// declaration (`checks/work_tables.sql`). That is sound only if every plan declares the same
    /// tables, all in steps that always run, and none after `diff_findings`'s file: then a
    /// committed diff of any scope left every table any other scope needs.
    @Test func everyPlanDeclaresTheSameWorkTablesAlwaysAndNoneAfterTheFindings() throws {
        func declared(_ file: String) -> [String] {
            guard let script = DiffSQL.stages[file] else { return [] }
            return script.statements.filter(\.declaresIfMissing).compactMap { statement in
                let text = statement.text
                guard let range = text.range(of: #"CREATE TEMP TABLE IF NOT EXISTS (\w+)"#, options: .regularExpression)
                else { return nil }
                return String(text[range].split(separator: " ").last!)
            }
        }
        var sets: [Set<String>] = []
        for scope in DiffPlan.Scope.allCases {
            let steps = DiffPlan.steps[scope]!
            var tables: [String] = []
            for step in steps where !declared(step.file).isEmpty {
                #expect(step.when == .always, "\(scope): \(step.file) declares work tables but runs \(step.when.rawValue)")
                tables += declared(step.file)
            }
            #expect(tables.contains("diff_findings"), "\(scope) never declares diff_findings")
            let findingsFile = try #require(steps.lastIndex { declared($0.file).contains("diff_findings") })
            #expect(steps[(findingsFile + 1)...].allSatisfy { declared($0.file).isEmpty },
                    "\(scope) declares work tables after diff_findings")
            sets.append(Set(tables))
        }
        #expect(sets.allSatisfy { $0 == sets[0] }, "the plans declare different work tables")
        // No stage creates a work table any other way than as a declaration the runner may skip:
        // one that is dropped at commit stays a plain CREATE.
        for path in DiffSQL.paths {
            for statement in DiffSQL.stages[path]?.statements ?? [] {
                let text = statement.text
                if statement.command == "CREATE", text.contains("ON COMMIT DELETE ROWS") {
                    #expect(statement.declaresIfMissing, "\(path): a table emptied at commit must be declared IF NOT EXISTS")
                }
            }
        }
    }

    @Test func theArchitectureDocumentShowsThePlan() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appending(path: "docs/architecture.md"), encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- diff-plan:begin -->\n"))
        let end = try #require(text.range(of: "<!-- diff-plan:end -->"))
        let shown = String(text[begin.upperBound..<end.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(shown == DiffPlan.markdown, "docs/architecture.md's plan is stale; paste DiffPlan.markdown:\n\(DiffPlan.markdown)")
    }
}
