import AppStore
import Foundation
import Yams

/// The policy file (`RECONCILE_POLICY_FILE`, SPEC section 17): named rules, in order, that decide
/// open review items after every run and every judgement of the notification receiver. YAML, or
/// JSON (a subset of YAML), read as nodes that know their line, so that every refusal names the
/// line, the key and why (``PolicyFileError``). Unknown keys are refused; codes are checked
/// against this build's types (``FindingKind``, ``TransactionSource``, ``BuyerBasis``).
public struct PolicyFile: Sendable, Equatable {
    /// The rules in file order: the first whose conditions an item meets is the one that decides it.
    public var rules: [PolicyRule]
    /// The `alerts:` section (SPEC section 19); nil when the file has none (the defaults apply).
    public var alerts: AlertRules?

    public init(rules: [PolicyRule], alerts: AlertRules? = nil) {
        self.rules = rules
        self.alerts = alerts
    }

    /// The largest file read (a policy file is a page or two).
    public static let maximumBytes = 1 << 20
    /// The most rules in a file.
    public static let maximumRules = 200
    /// The largest amount a condition or limit names, in major units.
    static let maximumAmount: Decimal = 1_000_000_000_000
    /// The most items a limit names.
    static let maximumItems = 10_000_000

    /// Reads and validates the file at `path`.
    public static func load(path: String) throws -> PolicyFile {
        let url = URL(fileURLWithPath: path)
        guard let handle = try? FileHandle(forReadingFrom: url) else {
            throw PolicyFileError(file: path, line: nil, key: "", why: "no such readable file")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumBytes + 1)) ?? Data()
        guard data.count <= maximumBytes else {
            throw PolicyFileError(file: path, line: nil, key: "", why: "larger than \(maximumBytes / 1024) KB")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw PolicyFileError(file: path, line: nil, key: "", why: "not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    /// Validates the text of a policy file; `file` names it in errors.
    public static func parse(_ text: String, file: String = "policy file") throws -> PolicyFile {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw Self.error(error, file: file)
        }
        guard let root else {
            throw PolicyFileError(file: file, line: 1, key: "", why: "the file is empty: expected a mapping with rules")
        }
        return try PolicyFileReader(file: file).policyFile(PolicyFileReader.Value(root, key: ""))
    }

    /// YAML's own errors (syntax, a key twice in one mapping) with their line.
    private static func error(_ error: YamlError, file: String) -> PolicyFileError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let why = [context?.text, problem].compactMap { $0 }.joined(separator: ": ")
            return PolicyFileError(file: file, line: mark.line, key: "", why: "not valid YAML or JSON (\(why))")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return PolicyFileError(
                file: file, line: context.mark.line, key: duplicates.first ?? "",
                why: "given twice in one mapping")
        default:
            return PolicyFileError(file: file, line: nil, key: "", why: "not valid YAML or JSON (\(error))")
        }
    }
}

/// Reads a composed policy file node by node, knowing each one's key path and line.
struct PolicyFileReader {
    let file: String

    /// A node with its place in the file.
    struct Value {
        let node: Node
        /// The path from the top, `rules[0].when.kind`.
        let key: String

        init(_ node: Node, key: String) {
            self.node = node
            self.key = key
        }

        var line: Int? { node.mark?.line }
    }

    func fail(_ value: Value, _ why: String) -> PolicyFileError {
        PolicyFileError(file: file, line: value.line, key: value.key, why: why)
    }

    // MARK: Shapes

    /// A mapping's values by key; a key not in `allowed` is refused at its own line, and so is a
    /// missing key of `required`.
    func mapping(_ value: Value, allowed: [String], required: [String] = []) throws -> [String: Value] {
        guard case .mapping(let mapping) = value.node else {
            throw fail(value, "expected a mapping with \(allowed.joined(separator: ", "))")
        }
        var values: [String: Value] = [:]
        for (keyNode, node) in mapping {
            let key = keyNode.scalar?.string ?? ""
            let path = value.key.isEmpty ? key : value.key + "." + key
            guard allowed.contains(key) else {
                throw PolicyFileError(
                    file: file, line: keyNode.mark?.line, key: path,
                    why: "unknown key; expected one of \(allowed.joined(separator: ", "))")
            }
            values[key] = Value(node, key: path)
        }
        for key in required where values[key] == nil {
            throw fail(value, "\(value.key.isEmpty ? "" : value.key + ".")\(key) is required")
        }
        return values
    }

    /// A scalar's text.
    func text(_ value: Value) throws -> String {
        guard case .scalar(let scalar) = value.node else { throw fail(value, "expected a single value") }
        return scalar.string
    }

    /// A list, or one value standing for a list of one.
    func list(_ value: Value) throws -> [Value] {
        switch value.node {
        case .sequence(let sequence):
            guard !sequence.isEmpty else { throw fail(value, "expected at least one value") }
            return sequence.enumerated().map { Value($1, key: "\(value.key)[\($0)]") }
        case .scalar:
            return [value]
        default:
            throw fail(value, "expected a list")
        }
    }

    /// A list of codes, each one of `known`.
    func codes<T>(_ value: Value, _ what: String, known: [T], name: (T) -> String) throws -> [T] {
        try list(value).map { item in
            let text = try text(item)
            guard let code = known.first(where: { name($0) == text }) else {
                throw fail(item, "\(text) is not a \(what); expected one of \(known.map(name).joined(separator: ", "))")
            }
            return code
        }
    }

    /// An amount in major units (`30`, `6.50`, at most three decimals), as milliunits.
    func amountMilli(_ value: Value) throws -> Int64 {
        let text = try text(value)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            parts.allSatisfy({ $0.allSatisfy(\.isNumber) }), parts.count == 1 || parts[1].count <= 3,
            let amount = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), amount > 0,
            amount <= PolicyFile.maximumAmount
        else {
            throw fail(value, "\(text) is not an amount: expected a positive number in major units, such as 30 or 6.50")
        }
        return NSDecimalNumber(decimal: amount * 1000).int64Value
    }

    /// A mapping of currency codes to amounts (`{CNY: 30, USD: 5}`).
    func amounts(_ value: Value) throws -> [String: Int64] {
        guard case .mapping(let mapping) = value.node, !mapping.isEmpty else {
            throw fail(value, "expected amounts by currency, such as {CNY: 30, USD: 5}")
        }
        var amounts: [String: Int64] = [:]
        for (keyNode, node) in mapping {
            let code = keyNode.scalar?.string ?? ""
            let entry = Value(node, key: value.key + "." + code)
            guard code.count == 3, code.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                throw PolicyFileError(
                    file: file, line: keyNode.mark?.line, key: entry.key,
                    why: "not a currency: expected a three-letter ISO 4217 code such as CNY")
            }
            amounts[code.uppercased()] = try amountMilli(entry)
        }
        return amounts
    }

    // MARK: The file

    func policyFile(_ value: Value) throws -> PolicyFile {
        let top = try mapping(value, allowed: ["rules", "alerts"])
        let alerts = try top["alerts"].map(self.alerts)
        guard let rulesValue = top["rules"] else {
            guard alerts != nil else { throw fail(value, "rules is required (or an alerts section)") }
            return PolicyFile(rules: [], alerts: alerts)
        }
        guard case .sequence(let sequence) = rulesValue.node else {
            throw fail(rulesValue, "expected a list of rules")
        }
        guard sequence.count <= PolicyFile.maximumRules else {
            throw fail(rulesValue, "at most \(PolicyFile.maximumRules) rules")
        }
        var rules: [PolicyRule] = []
        for (index, node) in sequence.enumerated() {
            let rule = try self.rule(Value(node, key: "rules[\(index)]"))
            if let earlier = rules.first(where: { $0.name == rule.name }) {
                throw PolicyFileError(
                    file: file, line: rule.line, key: "rules[\(index)].name",
                    why: "\(rule.name) is already the name of the rule on line \(earlier.line)")
            }
            rules.append(rule)
        }
        return PolicyFile(rules: rules, alerts: alerts)
    }

    /// The `alerts:` section: only the rules it names apply (an empty mapping turns every alert off).
    func alerts(_ value: Value) throws -> AlertRules {
        let fields = try mapping(value, allowed: AlertRules.keys)
        func count(_ value: Value) throws -> Int {
            let text = try text(value)
            guard let count = Int(text), (1...PolicyFile.maximumItems).contains(count) else {
                throw fail(value, "\(text) is not a count: expected a whole number from 1")
            }
            return count
        }
        var rules = AlertRules()
        rules.newHighFindings = try fields["new_high_findings"].map(count)
        rules.valueAtRisk = try fields["value_at_risk"].map(amounts)
        if let flagged = fields["flagged_segment"] {
            switch try text(flagged).lowercased() {
            case "true", "on", "yes": rules.flaggedSegment = true
            case "false", "off", "no": rules.flaggedSegment = false
            default: throw fail(flagged, "expected true or false")
            }
        }
        rules.unacknowledgedVoids = try fields["unacknowledged_voids"].map(count)
        rules.undeliveredNotifications = try fields["undelivered_notifications"].map(count)
        if let retry = fields["uploads_retry"] {
            let text = try text(retry)
            guard let share = Double(text), share > 0, share <= 1 else {
                throw fail(retry, "\(text) is not a share: expected a number above 0 and at most 1, such as 0.05")
            }
            rules.uploadsRetryShare = share
        }
        return rules
    }

    func rule(_ value: Value) throws -> PolicyRule {
        let fields = try mapping(
            value, allowed: ["name", "when", "limits", "decide", "note"], required: ["name", "when", "decide", "note"])
        let name = try self.name(fields["name"]!)
        let conditions = try self.conditions(fields["when"]!)
        let limits = try fields["limits"].map(self.limits) ?? PolicyRule.Limits()
        let decision = try self.decision(fields["decide"]!, kinds: conditions.kinds)
        let note = try self.note(fields["note"]!)
        return PolicyRule(
            name: name, line: value.line ?? 1, conditions: conditions, limits: limits, decision: decision, note: note)
    }

    /// Letters, digits, `-`, `_` and `.`, at most 64: the name is part of the actor every decision
    /// is recorded as (`policy:<name>`) and of the report's keys.
    func name(_ value: Value) throws -> String {
        let name = try text(value)
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
        guard !name.isEmpty, name.count <= 64, name.unicodeScalars.allSatisfy({ $0.isASCII && allowed.contains($0) })
        else {
            throw fail(value, "\(name.isEmpty ? "an empty name" : name) is not a rule name: "
                + "use 1 to 64 letters, digits, -, _ or . (it becomes the actor policy:<name>)")
        }
        return name
    }

    func conditions(_ value: Value) throws -> PolicyRule.Conditions {
        let fields = try mapping(
            value,
            allowed: ["kind", "product", "max_amount", "environment", "sources", "buyer_basis", "no_open", "store"],
            required: ["kind"])
        func kinds(_ value: Value) throws -> [FindingKind] {
            try codes(value, "finding kind", known: FindingKind.allCases, name: \.rawValue)
        }
        var conditions = PolicyRule.Conditions(kinds: try kinds(fields["kind"]!))
        conditions.products = try fields["product"].map { try list($0).map(text) }
        conditions.maxAmountMilli = try fields["max_amount"].map(amounts)
        if let environment = fields["environment"] {
            let text = try text(environment)
            guard let setting = Settings.Environment(rawValue: text.lowercased()) else {
                throw fail(environment, "\(text) is not an environment; expected production or sandbox")
            }
            conditions.environment = setting.apple
        }
        conditions.sources = try fields["sources"].map {
            try codes($0, "source", known: TransactionSource.known, name: \.rawValue)
        }
        conditions.buyerBasis = try fields["buyer_basis"].map {
            try codes($0, "buyer basis", known: BuyerBasis.known, name: \.rawValue)
        }
        conditions.noOpen = try fields["no_open"].map(kinds)
        conditions.stores = try fields["store"].map { try codes($0, "store", known: Store.allCases, name: \.rawValue) }
        return conditions
    }

    func limits(_ value: Value) throws -> PolicyRule.Limits {
        let fields = try mapping(value, allowed: ["per_account_per_day", "per_run"])
        return PolicyRule.Limits(
            perAccountPerDay: try fields["per_account_per_day"].map(limit), perRun: try fields["per_run"].map(limit))
    }

    func limit(_ value: Value) throws -> PolicyRule.Limit {
        let fields = try mapping(value, allowed: ["items", "amount"])
        guard !fields.isEmpty else { throw fail(value, "expected items, amount or both") }
        var limit = PolicyRule.Limit()
        if let items = fields["items"] {
            let text = try text(items)
            guard let count = Int(text), (1...PolicyFile.maximumItems).contains(count) else {
                throw fail(items, "\(text) is not a number of items: expected a whole number from 1")
            }
            limit.items = count
        }
        limit.amountMilli = try fields["amount"].map(amounts)
        return limit
    }

    /// `granted`, `revoked`, `no_action` or `dismissed`. A grant is offered only for kinds whose
    /// suggested action is a grant, a revocation only for kinds whose is a revocation: a policy
    /// does what a person would do routinely, never the other way round.
    func decision(_ value: Value, kinds: [FindingKind]) throws -> BulkDecision.Decision {
        let text = try text(value)
        let decisions: [BulkDecision.Decision] = [.resolve(.granted), .resolve(.revoked), .resolve(.noAction), .dismiss]
        guard let decision = decisions.first(where: { $0.policyName == text }) else {
            let names = decisions.map(\.policyName).joined(separator: ", ")
            throw fail(value, "\(text) is not a decision; expected \(names)")
        }
        if case .resolve(let resolution) = decision, let action = resolution.action {
            let expected = action == .grant ? SuggestedAction.grant : .revoke
            if let kind = kinds.first(where: { $0.suggestedAction != expected }) {
                let fitting = FindingKind.allCases.filter { $0.suggestedAction == expected }.map(\.rawValue)
                throw fail(value, "\(text) fits only kinds whose suggested action is \(expected) "
                    + "(\(fitting.joined(separator: ", "))); \(kind)'s is \(kind.suggestedAction)")
            }
        }
        return decision
    }

    func note(_ value: Value) throws -> String {
        let note = try text(value)
        guard ReviewNote.problem(note, required: true) == nil else {
            throw fail(value, "expected a note of 1 to \(ReviewNote.maximumLength) characters: "
                + "it is kept with every decision")
        }
        return note.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
