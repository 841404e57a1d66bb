import ArgumentParser
import Reconciliation

/// `reconcile policy check FILE`: validates a policy file without a database.
struct PolicyCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a policy file: exit 0, or 64 with the line, the key and why.",
        discussion: """
            Checks the YAML or JSON syntax, every key (unknown keys are errors), every finding kind, source, \
            buyer basis, environment, amount and limit, that rule names are unique, and that a rule grants only \
            kinds whose suggested action is a grant and revokes only kinds whose is a revocation. Prints each \
            rule in one line when the file is valid.
            """
    )

    @Argument(help: "The policy file (YAML, or JSON).")
    var file: String

    @OptionGroup var common: CommonOptions

    func run() async throws {
        try await common.run { _ in
            let policies = try PolicyFile.load(path: file)
            print("\(file): valid, \(policies.rules.count) rule(s)")
            for rule in policies.rules { print("  " + PolicyText.summary(rule)) }
            let alerts = policies.alerts ?? .defaults
            print("alerts\(policies.alerts == nil ? " (the defaults: the file has no alerts section)" : ""): "
                + (alerts.summary.isEmpty ? "none" : alerts.summary.joined(separator: "; ")))
        }
    }
}

/// How the commands print a rule.
enum PolicyText {
    /// `routine-small-pack (line 2): granted missed_delivery, at most 30 CNY, sources server_api|jws`.
    static func summary(_ rule: PolicyRule) -> String {
        let conditions = rule.conditions
        func list(_ values: [String]) -> String { values.joined(separator: "|") }
        var parts = [list(conditions.kinds.map(\.rawValue))]
        if let products = conditions.products { parts.append("products " + list(products.map(terminalSafe))) }
        if let caps = conditions.maxAmountMilli {
            parts.append("at most " + caps.sorted { $0.key < $1.key }
                .map { Money(milli: $0.value, currency: $0.key).text() }.joined(separator: " or "))
        }
        if let environment = conditions.environment { parts.append(environment.rawValue) }
        if let sources = conditions.sources { parts.append("sources " + list(sources.map(\.rawValue))) }
        if let bases = conditions.buyerBasis { parts.append("buyer by " + list(bases.map(\.rawValue))) }
        if let kinds = conditions.noOpen { parts.append("no open " + list(kinds.map(\.rawValue))) }
        if let stores = conditions.stores { parts.append("store " + list(stores.map(\.rawValue))) }
        func limit(_ name: String, _ limit: PolicyRule.Limit?) {
            guard let limit else { return }
            var caps: [String] = limit.items.map { ["\($0) item(s)"] } ?? []
            caps += (limit.amountMilli ?? [:]).sorted { $0.key < $1.key }
                .map { Money(milli: $0.value, currency: $0.key).text() }
            parts.append("\(name) \(caps.joined(separator: ", "))")
        }
        limit("per account per day", rule.limits.perAccountPerDay)
        limit("per run", rule.limits.perRun)
        return "\(rule.name) (line \(rule.line)): \(rule.decision.policyName) " + parts.joined(separator: "; ")
    }
}
