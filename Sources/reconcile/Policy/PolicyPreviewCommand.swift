import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile policy preview [--json]`: what the policies would decide on the queue now; decides nothing.
struct PolicyPreviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "List what the policies would decide now (item, rule, decision); decide nothing.",
        discussion: """
            Reads RECONCILE_POLICY_FILE (or --file) and the review queue, and lists each open item the first \
            rule that takes it would decide, in the order a run would, with the items a rule takes but its \
            limits leave to people (counted from what it decided in the last 24 hours, as if this were a new \
            run). --json prints an array of {"review_item_id", "rule", "decision"} for the items it would decide.
            """
    )

    @Option(help: "The policy file (default: RECONCILE_POLICY_FILE).")
    var file: String?

    @Flag(help: "Print a JSON array of the items the policies would decide.")
    var json = false

    @OptionGroup var database: ReviewDatabaseOptions

    struct Decision: Encodable {
        let reviewItemID: Int64
        let rule: String
        let decision: String

        enum CodingKeys: String, CodingKey {
            case reviewItemID = "review_item_id", rule, decision
        }
    }

    func run() async throws {
        try await database.run { logger in
            let settings = try await database.settings()
            guard let path = file ?? settings.policyFile else {
                throw ConfigurationError("no policy file: set RECONCILE_POLICY_FILE or give --file")
            }
            let policies = try PolicyFile.load(path: path)
            let connection = try settings.connect()
            try Schema.requireUpToDate(connection)
            let matches = try PolicyEngine(
                file: policies, approval: settings.approvalAbove, judgement: try DecisionJudgement.rules(settings),
                logger: logger)
                .preview(on: connection)
            let decided = matches.filter { $0.held == nil }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                let rows = decided.map {
                    Decision(reviewItemID: $0.id, rule: $0.rule, decision: $0.decision.policyName)
                }
                print(String(decoding: try encoder.encode(rows), as: UTF8.self))
                return
            }
            for match in matches {
                let value = match.value.map { $0.text() } ?? "value unknown"
                let what = match.held.map { "left to people: \($0)" } ?? match.decision.policyName
                print("#\(match.id) \(match.rule) \(what) (\(terminalSafe(match.userID)), \(value))")
            }
            let byRule = policies.rules.map { rule in "\(rule.name) \(decided.filter { $0.rule == rule.name }.count)" }
            print("\(decided.count) item(s) would be decided (\(byRule.joined(separator: ", "))); "
                + "\(matches.count - decided.count) left to people by a limit. Nothing was decided.")
        }
    }
}
