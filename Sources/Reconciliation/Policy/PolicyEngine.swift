import Foundation
import Logging
import Postgres

/// Applies a policy file's rules to the review queue (SPEC section 17): after every run (every
/// open item) and every judgement of the notification receiver (only the items that judgement
/// opened or changed), and, deciding nothing, for `reconcile policy preview`.
///
/// Each rule's conditions are one set-based statement over the open items (`sql/policy/matches.sql`,
/// the conditions bound as typed values); the rules are asked in file order and an item belongs
/// to the first that takes it. Each item is then decided through ``ReviewDecisions`` exactly as a
/// person's decision (one event, one outbox row, its own transaction), as `policy:<name>` with the
/// rule's note, after a check inside that transaction on the locked item: still open and never
/// claimed, still taken by the rule, and within its limits, counted from its events under a lock
/// of the rule's (`lock_rule.sql`), so that processes deciding at once cannot overrun them. An item
/// that fails the check is left to people.
public struct PolicyEngine: Sendable {
    public let file: PolicyFile
    /// A decision above it waits for a person's approval, a policy's as a person's
    /// (`RECONCILE_APPROVAL_ABOVE`).
    public let approval: ApprovalThreshold
    /// How each decision judges its item again first, a policy's as a person's (SPEC section 6).
    let judgement: DecisionJudgement
    let logger: Logger

    public init(
        file: PolicyFile, approval: ApprovalThreshold, judgement: DecisionJudgement,
        logger: Logger = Logger(label: "reconcile.policy")
    ) {
        self.file = file
        self.approval = approval
        self.judgement = judgement
        self.logger = logger
    }

    /// One item a rule takes.
    public struct Match: Sendable, Equatable {
        /// The review item.
        public var id: Int64
        /// The rule that takes it (the first in the file).
        public var rule: String
        /// What the rule decides.
        public var decision: BulkDecision.Decision
        /// The item's account.
        public var userID: String?
        /// The item's value, when known.
        public var value: Money?
        /// Why it is left to people (a limit), or nil when the rule decides it.
        public var held: String?
    }

    /// What one pass decided, by rule in file order.
    public struct Outcome: Sendable, Equatable {
        /// Items decided, by rule (every rule of the file, zeros included).
        public var decided: [(rule: String, items: Int)] = []
        /// Items a rule took but left to people: over a limit, claimed or decided meanwhile, or a
        /// decision the evidence does not allow (no buyer to grant to).
        public var left: [(id: Int64, rule: String, reason: String)] = []

        public var total: Int { decided.reduce(0) { $0 + $1.items } }

        public static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            lhs.decided.map { "\($0.rule) \($0.items)" } == rhs.decided.map { "\($0.rule) \($0.items)" }
                && lhs.left.map(\.id) == rhs.left.map(\.id)
        }
    }

    /// What the rules would decide now, in the order they would: every item a rule takes, with why
    /// it would be left when a limit holds it (the limits counted from what each rule decided in the
    /// last 24 hours, and as if this were a new run). Decides nothing.
    public func preview(on connection: Connection) throws -> [Match] {
        var ledger = Ledger()
        return try matches(on: connection).map { entry in
            var match = entry.match
            let rule = file.rules[entry.rule]
            let spent = try ledger.spent(rule, match, on: connection)
            match.held = Self.hold(rule, match, account: spent.account, run: spent.run)
            if match.held == nil { ledger.add(rule, match) }
            return match
        }
    }

    /// Decides every item the rules take now, each in its own transaction, for run `runID` (its
    /// events carry it: the per-run limits and the report count them). `items`: only these (a
    /// receiver pass decides only the items its own judgement opened or changed; the rest of the
    /// queue is the nightly run's); nil: every open item. Cancellation stops between items.
    public func apply(runID: Int64, items: [Int64]? = nil, on connection: Connection) throws -> Outcome {
        var decided = Array(repeating: 0, count: file.rules.count)
        var outcome = Outcome()
        if let items, items.isEmpty {
            outcome.decided = file.rules.map { ($0.name, 0) }
            return outcome
        }
        for entry in try matches(items: items, on: connection) {
            if Task.isCancelled { break }
            let rule = file.rules[entry.rule]
            do {
                if try decide(entry.match.id, by: rule, runID: runID, on: connection) { decided[entry.rule] += 1 }
            } catch let hold as Hold {
                outcome.left.append((entry.match.id, rule.name, hold.reason))
            } catch let error as ReviewError {
                // The item's own reason (decided meanwhile, no buyer to grant to): left as it is.
                outcome.left.append((entry.match.id, rule.name, error.description))
            }
        }
        outcome.decided = zip(file.rules, decided).map { ($0.name, $1) }
        for (id, rule, reason) in outcome.left {
            logger.notice("policy left an item to people", metadata: [
                "review_item.id": "\(id)", "policy.rule": "\(rule)", "reason": "\(reason)",
            ])
        }
        logger.info("policies applied", metadata: [
            "run.id": "\(runID)", "policy.decided": "\(outcome.total)", "policy.left": "\(outcome.left.count)",
        ])
        return outcome
    }

    /// Decides item `id` as `rule` does, in a transaction of its own, after ``admit`` on the locked
    /// item; true when this call decided it. Throws `Hold` or a `ReviewError` to leave it as it is.
    func decide(_ id: Int64, by rule: PolicyRule, runID: Int64, on connection: Connection) throws -> Bool {
        let service = ReviewDecisions(connection: connection, approval: approval, judgement: judgement)
        let decider = ReviewDecisions.Decider(actor: rule.actor, runID: runID) { item in
            try self.admit(item, rule: rule, runID: runID, on: connection)
        }
        let result = switch rule.decision {
        case .resolve(let resolution): try service.resolve(id: id, resolution: resolution, as: decider, note: rule.note)
        case .dismiss: try service.dismiss(id: id, as: decider, note: rule.note)
        }
        return result.changed
    }

    // MARK: Matching

    /// Each open item (of `items`, when given) with the first rule that takes it, in rule order,
    /// then oldest first.
    private func matches(items: [Int64]? = nil, on connection: Connection) throws -> [(rule: Int, match: Match)] {
        var taken = Set<Int64>()
        var matches: [(rule: Int, match: Match)] = []
        for (index, rule) in file.rules.enumerated() {
            for row in try connection.query(SQL.matches, Self.values(rule, itemID: nil, itemIDs: items)) {
                let id: Int64 = try row["id"]
                guard taken.insert(id).inserted else { continue }
                let amount: Int64? = try row["amount_milli"]
                let currency: String? = try row["currency"]
                matches.append((index, Match(
                    id: id, rule: rule.name, decision: rule.decision, userID: try row["user_id"],
                    value: amount.flatMap { amount in currency.map { Money(milli: amount, currency: $0) } })))
            }
        }
        return matches
    }

    /// The rule's conditions as the values of `matches.sql`.
    static func values(_ rule: PolicyRule, itemID: Int64?, itemIDs: [Int64]? = nil) -> SQLValues {
        let conditions = rule.conditions
        let caps = conditions.maxAmountMilli?.sorted { $0.key < $1.key }
        return [
            "item_id": itemID, "item_ids": itemIDs, "kinds": conditions.kinds.map(\.rawValue), "products": conditions.products,
            "max_currencies": caps?.map(\.key), "max_amounts_milli": caps?.map(\.value),
            "environment": conditions.environment?.rawValue, "sources": conditions.sources,
            "buyer_bases": conditions.buyerBasis, "no_open_kinds": conditions.noOpen?.map(\.rawValue),
            "stores": conditions.stores?.map(\.rawValue),
            "undecided_statuses": ReviewStatus.allCases.filter { !$0.isDecided && $0 != .autoResolved }.map(\.rawValue),
        ]
    }

    // MARK: Limits

    /// An item a rule took that it leaves to people, and why.
    struct Hold: Error {
        let reason: String
    }

    /// What a rule decided within a limit's span: items, and their amount in one currency.
    struct Spent {
        var items = 0
        var amountMilli: Int64 = 0
    }

    /// Why the rule's limits hold `match` back after what it decided (`account`: about the item's
    /// account in 24 hours; `run`: within this run's budget, a nightly run's with the receiver
    /// passes after it, `counts.sql`), or nil when it may decide it.
    static func hold(_ rule: PolicyRule, _ match: Match, account: Spent, run: Spent) -> String? {
        if let limit = rule.limits.perAccountPerDay {
            guard match.userID != nil else {
                return "the item's account is unknown, so the rule's per_account_per_day limit cannot be counted"
            }
            if !limit.admits(value: match.value, decided: account.items, spent: account.amountMilli) {
                return "over the rule's per_account_per_day limit (\(account.items) item(s) of the account decided "
                    + "in the last 24 hours)"
            }
        }
        if let limit = rule.limits.perRun,
            !limit.admits(value: match.value, decided: run.items, spent: run.amountMilli)
        {
            return "over the rule's per_run limit (\(run.items) item(s) decided in this nightly run's budget)"
        }
        return nil
    }

    /// Inside the decision's transaction, on the locked item: open and never claimed, still taken by
    /// the rule, and within its limits as its events say under the rule's lock; otherwise `Hold`.
    private func admit(_ item: ReviewItem, rule: PolicyRule, runID: Int64, on connection: Connection) throws {
        guard item.status == .open, item.assignee == nil else {
            throw Hold(reason: item.assignee.map { "claimed by \($0)" } ?? "now \(item.status.rawValue)")
        }
        guard let row = try connection.queryFirst(SQL.matches, Self.values(rule, itemID: item.id)) else {
            throw Hold(reason: "no longer meets the rule's conditions")
        }
        let amount: Int64? = try row["amount_milli"]
        let currency: String? = try row["currency"]
        let match = Match(
            id: item.id, rule: rule.name, decision: rule.decision, userID: item.userID,
            value: amount.flatMap { amount in currency.map { Money(milli: amount, currency: $0) } })
        try connection.execute(SQL.lockRule, ["lock_class": Schema.LockKey.policyClass, "actor": rule.actor.name])
        let counts = try Self.counts(rule, match, runID: runID, on: connection)
        if let reason = Self.hold(rule, match, account: counts.account, run: counts.run) { throw Hold(reason: reason) }
    }

    /// What the rule decided about the item's account in 24 hours and in run `runID`, from its events.
    static func counts(_ rule: PolicyRule, _ match: Match, runID: Int64?, on connection: Connection) throws
        -> (account: Spent, run: Spent)
    {
        let row = try connection.query(
            SQL.counts,
            ["actor": rule.actor.name, "user_id": match.userID, "run_id": runID, "currency": match.value?.currency])[0]
        return (Spent(items: try row["account_items"], amountMilli: try row["account_amount_milli"]),
                Spent(items: try row["run_items"], amountMilli: try row["run_amount_milli"]))
    }

    /// A preview's running totals: what each rule decided about each account in 24 hours (from its
    /// events, plus what the preview would add) and in this would-be run.
    private struct Ledger {
        private var accountItems: [String: Int] = [:]
        private var accountAmounts: [String: Int64] = [:]
        private var runItems: [String: Int] = [:]
        private var runAmounts: [String: Int64] = [:]

        private static func key(_ parts: String...) -> String { parts.joined(separator: "\u{0}") }

        mutating func spent(_ rule: PolicyRule, _ match: Match, on connection: Connection) throws
            -> (account: Spent, run: Spent)
        {
            let currency = match.value?.currency ?? ""
            var account = Spent()
            if let user = match.userID {
                let items = Self.key(rule.name, user), amount = Self.key(rule.name, user, currency)
                // A currency the preview added nothing in yet is read from the events as they are.
                if accountItems[items] == nil || accountAmounts[amount] == nil {
                    let recorded = try PolicyEngine.counts(rule, match, runID: nil, on: connection).account
                    accountItems[items] = accountItems[items] ?? recorded.items
                    accountAmounts[amount] = recorded.amountMilli
                }
                account = Spent(items: accountItems[items] ?? 0, amountMilli: accountAmounts[amount] ?? 0)
            }
            let run = Spent(
                items: runItems[rule.name] ?? 0, amountMilli: runAmounts[Self.key(rule.name, currency)] ?? 0)
            return (account, run)
        }

        mutating func add(_ rule: PolicyRule, _ match: Match) {
            let currency = match.value?.currency ?? "", amount = match.value?.milli ?? 0
            if let user = match.userID {
                accountItems[Self.key(rule.name, user), default: 0] += 1
                accountAmounts[Self.key(rule.name, user, currency), default: 0] += amount
            }
            runItems[rule.name, default: 0] += 1
            runAmounts[Self.key(rule.name, currency), default: 0] += amount
        }
    }

    /// The statements, in `sql/policy/`.
    enum SQL {
        static let matches: SQLFile = "policy/matches.sql"
        static let lockRule: SQLFile = "policy/lock_rule.sql"
        static let counts: SQLFile = "policy/counts.sql"
        static let decided: SQLFile = "policy/decided.sql"
    }
}
