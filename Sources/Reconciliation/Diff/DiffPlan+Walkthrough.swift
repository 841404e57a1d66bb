import Foundation
import Postgres

extension DiffPlan {
    /// docs/architecture.md's "Running a stage by hand": a window run's stages as a psql session,
    /// generated from the plan and from the values the runner binds (`Differ.Parameters.values`),
    /// so that it names every file the plan runs, in order, and sets every value those files take.
    /// `DiffWalkthroughTests` holds the document equal to it and runs it in psql.
    static func walkthrough(_ parameters: Differ.Parameters, relations: Differ.Relations = .standard) throws -> String {
        let values = parameters.values
        var files: [(file: String, when: Condition)] = []
        for step in steps[Scope(parameters.scope)]! {
            if step.file == rules {
                for kind in FindingKind.allCases where kind.applies(in: parameters.environment) {
                    files.append(("findings/\(kind.rawValue).sql", step.when))
                }
            } else {
                files.append((step.file, step.when))
            }
        }
        var used: [String] = []
        for (file, _) in files {
            guard let script = DiffSQL.script(file) else { throw SQLScriptError(problem: "no sql/diff/\(file)") }
            let names = script.valueNames + (script.declaredValues ?? []).sorted()
            for name in names where !used.contains(name) {
                guard values[name] != nil else {
                    throw SQLScriptError(problem: "sql/diff/\(file) takes :'\(name)', which the runner does not bind")
                }
                used.append(name)
            }
        }
        var lines = ["psql \"$DATABASE_URL\""]
        for (name, relation) in relations.byName.sorted(by: { $0.key < $1.key }) {
            lines.append("\\set \(name) \(relation)")
        }
        for name in used.sorted() {
            let text = values[name]!.postgresText ?? ""
            lines.append("\\set \(name) '\(text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'"))'")
        }
        lines.append("BEGIN;")
        for (file, when) in files {
            // psql reads the rest of a `\\i` line as arguments: the condition goes on a line of its own.
            if when != .always && when != .ruleApplies { lines.append("-- the runner runs this \(when.rawValue):") }
            lines.append("\\i sql/diff/\(file)")
        }
        lines.append("ROLLBACK;")
        return lines.joined(separator: "\n")
    }

    /// The walk-through's parameters as docs/architecture.md prints them: run 42 over a window,
    /// the ledger's changes judged, in production.
    static var walkthroughParameters: Differ.Parameters {
        let at = { (text: String) in ISO8601DateFormatter().date(from: text)! }
        return Differ.Parameters(
            runID: 42, bundleIDs: ["com.example.app"], environment: .production,
            judgeBefore: at("2026-11-23T02:00:00Z"), since: at("2026-11-22T00:00:00Z"), until: at("2026-11-23T02:30:00Z"),
            serverAPIEnabled: false, resumesAfter: 41, ledgerChangesAfter: "1:1:")
    }
}

extension FindingKind {
    /// docs/architecture.md's table of the kinds, generated from their contracts (`DiffPlanTests`
    /// holds the document equal to it).
    static var markdown: String {
        var lines = [
            "| `kind` | severity | `suggested_action` | resolutions | about | `user_id` | SQL |",
            "|---|---|---|---|---|---|---|",
        ]
        for kind in allCases {
            let contract = kind.contract
            let resolutions = Resolution.allCases.filter(contract.allowedResolutions.contains).map { "`\($0.rawValue)`" }
            var about = contract.subject == .upload ? "an upload" : "a transaction"
            if contract.environments == .productionOnly { about += " (production only)" }
            if contract.asksAppleWhileOpen { about += "; asks Get Transaction Info while open" }
            if contract.disputesTheHolder { about += "; disputes the holder" }
            lines.append(
                "| `\(kind.rawValue)` | \(contract.severity.rawValue) | `\(contract.suggestedAction.rawValue)` | "
                    + resolutions.joined(separator: ", ") + " | \(about) | "
                    + (contract.account == .buyer ? "the buyer" : "the credited account")
                    + " | [findings/\(kind.rawValue).sql](../sql/diff/findings/\(kind.rawValue).sql) |")
        }
        return lines.joined(separator: "\n")
    }
}
