/// The diff's plan as data: per scope, which files of `sql/diff/` run, in which order, under which
/// condition. `Differ.computeFindings` executes it and nothing else; docs/architecture.md's
/// walk-through is this list (`DiffPlanTests` holds the two equal).
enum DiffPlan {
    /// When a step runs.
    enum Condition: String, Sendable, CaseIterable {
        /// Always.
        case always = "always"
        /// A run that judges the ledger's changes (`Differ.Parameters.ledgerChangesAfter`): every
        /// window run; the desk's window diffs do not.
        case ledgerChangesNoted = "when the ledger's changes are judged"
        /// While a username is unresolved (`diff_hashes` has rows): without the index on
        /// account_hash (an operator's own relation) the step hashes every account.
        case usernamesUnresolved = "when a username is still unresolved"
        /// Every finding kind's rule that applies in the job's environment (`FindingKind.applies(in:)`).
        case ruleApplies = "per finding kind that applies in the counted environment"
        /// When the caller wants evidence (the desk's picture reads only kinds).
        case evidenceWanted = "when evidence is wanted (not the desk's picture)"
        /// A scope with an end (a run's, not the desk's).
        case scopeHasEnd = "when the scope has an end (runs, not the desk)"
    }

    /// One step: a file (relative to `sql/diff/`; `findings/` stands for every rule) and when it runs.
    struct Step: Sendable, Equatable {
        var file: String
        var when: Condition = .always
        /// Run with sequential scans priced out when the scope is a sliver of the history
        /// (`sql/diff/checks/scope_size.sql`): these statements join the scope with the white table and the
        /// ledger, planned as hash joins over the whole tables otherwise, although looking up a
        /// few percent of the rows by index takes half the time (docs/benchmarks.md).
        var byIndexWhenNarrow = false

        init(_ file: String, when: Condition = .always, byIndexWhenNarrow: Bool = false) {
            self.file = file
            self.when = when
            self.byIndexWhenNarrow = byIndexWhenNarrow
        }
    }

    /// Which scope a plan is for.
    enum Scope: String, Sendable, CaseIterable {
        case window, wholeHistory = "whole history", transactions

        init(_ scope: DiffScope) {
            switch scope {
            case .window: self = .window
            case .wholeHistory: self = .wholeHistory
            case .transactions: self = .transactions
            }
        }
    }

    /// The step that starts judging the filled scope. The runner measures the scope before it
    /// (`checks/scope_size.sql`): narrow, the by-index steps price sequential scans out; not
    /// `analyse` (a few hundred transactions: a quiet night, most of the support desk's customers;
    /// or a connection whose work tables already hold statistics of a scope about this size), the
    /// stages from there skip the statements that only inform the planner (`ANALYZE`, indexes
    /// that are not unique). Over so few rows plans from the tables' sizes alone cost little, while
    /// each of those statements costs its own round trip and catalog writes; over a thousand rows,
    /// plans without statistics were slower than the statistics (docs/benchmarks.md, the ninth
    /// session), and statistics of the same sizes taken again were the same.
    static var firstJudgingStep: Step { judging[0] }

    /// The findings' rules, in `FindingKind` order.
    static let rules = "findings/"

    /// Every scope's steps, in order.
    static let steps: [Scope: [Step]] = [
        .window: start + [
            Step("scope/touched_by_run.sql"),
            Step("scope/window.sql"),
            Step("scope/ledger_changes.sql", when: .ledgerChangesNoted),
            // Every window run, whether or not it carries items over: a transaction with no item can
            // become a finding when an account its binding names appears.
            Step("scope/changed_bindings.sql", when: .ledgerChangesNoted),
        ] + judging,
        .wholeHistory: start + [
            Step("scope/touched_by_run.sql"),
            Step("scope/whole_history.sql"),
        ] + judging,
        .transactions: start + [
            Step("scope/transactions.sql"),
        ] + judging,
    ]

    /// The checks the runner reads between steps (`Differ.computeFindings`).
    static let checks = ["checks/work_tables.sql", "checks/scope_size.sql", "checks/usernames_unresolved.sql"]

    /// Every file a scope's plan may run, whatever its conditions (the rules of every kind): the
    /// values the runner gives the plan are exactly those these files take.
    static func files(_ scope: Scope) -> [String] {
        checks + steps[scope]!.flatMap { step in
            step.file == rules ? FindingKind.allCases.map(DiffSQL.rule) : [step.file]
        }
    }

    private static let start = [Step("00_session.sql"), Step("10_blocked.sql"), Step("scope/tables.sql")]

    private static let judging = [
        // Not by index: with sequential scans priced out and `diff_scope` keyed by a digest, a
        // nothing-new night's families stage walked the whole white table's index (5.9 s at 5M in
        // the full-size bench of 2026-11-23); the planner's own plan probes by key.
        Step("scope/families.sql"),
        Step("30_tx.sql", byIndexWhenNarrow: true),
        Step("31_key.sql", byIndexWhenNarrow: true),
        Step("32_dl.sql", byIndexWhenNarrow: true),
        Step("33_claims.sql"),
        Step("34_key_deliveries.sql"),
        Step("40_buyer_bindings.sql"),
        Step("41_buyer_people.sql"),
        Step("42_buyer_people_hashed.sql", when: .usernamesUnresolved),
        Step("43_buyer.sql"),
        Step("50_findings_table.sql"),
        Step(rules, when: .ruleApplies),
        Step("60_findings_store.sql"),
        Step("70_evidence.sql", when: .evidenceWanted),
        Step("71_actions.sql", when: .evidenceWanted),
        Step("75_unchanged.sql", when: .scopeHasEnd),
    ]

    /// The plan as the Markdown table docs/architecture.md shows: a row per step in run order, a
    /// column per scope (✓ where that scope runs it), and its condition.
    static var markdown: String {
        // The steps of every scope, merged in run order: a step one scope lacks goes after the
        // step it follows in the scope that has it.
        var order: [Step] = []
        for scope in Scope.allCases {
            var previous: Int?
            for step in steps[scope]! {
                if let index = order.firstIndex(of: step) {
                    previous = index
                } else {
                    let at = previous.map { $0 + 1 } ?? 0
                    order.insert(step, at: at)
                    previous = at
                }
            }
        }
        var lines = [
            "| File | " + Scope.allCases.map(\.rawValue).joined(separator: " | ") + " | Runs |",
            "|---|" + Scope.allCases.map { _ in "---|" }.joined() + "---|",
        ]
        for step in order {
            let file = step.file == rules
                ? "[findings/\\<kind\\>.sql](../sql/diff/findings)"
                : "[\(step.file)](../sql/diff/\(step.file))"
            let marks = Scope.allCases.map { steps[$0]!.contains(step) ? "✓" : "" }
            var when = step.when == .always ? "" : step.when.rawValue
            if step.byIndexWhenNarrow { when += (when.isEmpty ? "" : "; ") + "by index when the scope is narrow" }
            lines.append("| \(file) | " + marks.joined(separator: " | ") + " | \(when) |")
        }
        return lines.joined(separator: "\n")
    }
}
