import AppStore
import Foundation

/// One named rule of a policy file (SPEC section 17): which open items it takes, how many and how
/// much it may decide, and what it decides them as, with its note. Its decisions are made as
/// ``actor`` exactly as a person's are (``ReviewDecisions``), so they are audited, enqueued and
/// held for approval like any other.
public struct PolicyRule: Sendable, Equatable {
    /// The rule's name, unique in its file: `routine-small-pack`.
    public var name: String
    /// The line of the file the rule starts on.
    public var line: Int
    /// Which items it takes.
    public var conditions: Conditions
    /// How many and how much it may decide.
    public var limits: Limits
    /// What it decides them as.
    public var decision: BulkDecision.Decision
    /// Kept with each decision, in the history and the outbox.
    public var note: String

    /// Who its decisions are recorded as: `policy:<name>`.
    public var actor: ReviewActor { .policy(rule: name) }

    /// What every policy's actor starts with; no person may take a name that does.
    public static let actorPrefix = ReviewActor.policyPrefix

    public init(
        name: String, line: Int = 1, conditions: Conditions, limits: Limits = Limits(),
        decision: BulkDecision.Decision, note: String
    ) {
        self.name = name
        self.line = line
        self.conditions = conditions
        self.limits = limits
        self.decision = decision
        self.note = note
    }

    /// The rule's `when`: every condition given must hold; one absent holds for every item.
    public struct Conditions: Sendable, Equatable {
        /// The item's kind is one of these (required).
        public var kinds: [FindingKind]
        /// The item's product is one of these.
        public var products: [String]?
        /// The item's value is at most this much in its currency, milliunits by currency; an item in
        /// another currency, or of unknown value, never matches.
        public var maxAmountMilli: [String: Int64]?
        /// Apple's transaction is of this environment.
        public var environment: AppStoreEnvironment?
        /// At least one of these sources confirmed the transaction.
        public var sources: [TransactionSource]?
        /// The buyer was decided this way.
        public var buyerBasis: [BuyerBasis]?
        /// The item's account has no other undecided item of these kinds.
        public var noOpen: [FindingKind]?
        /// The item is about one of these stores' purchases (SPEC section 18).
        public var stores: [Store]?

        public init(
            kinds: [FindingKind], products: [String]? = nil, maxAmountMilli: [String: Int64]? = nil,
            environment: AppStoreEnvironment? = nil, sources: [TransactionSource]? = nil,
            buyerBasis: [BuyerBasis]? = nil, noOpen: [FindingKind]? = nil, stores: [Store]? = nil
        ) {
            self.kinds = kinds
            self.products = products
            self.maxAmountMilli = maxAmountMilli
            self.environment = environment
            self.sources = sources
            self.buyerBasis = buyerBasis
            self.noOpen = noOpen
            self.stores = stores
        }
    }

    /// A cap on what a rule decides within a span (an account's last 24 hours, or one run).
    public struct Limit: Sendable, Equatable {
        /// At most this many items.
        public var items: Int?
        /// At most this much per currency, milliunits; an item in a currency the cap does not name,
        /// or of unknown value, is over it.
        public var amountMilli: [String: Int64]?

        public init(items: Int? = nil, amountMilli: [String: Int64]? = nil) {
            self.items = items
            self.amountMilli = amountMilli
        }

        /// Whether one more item of `value` fits, after `decided` items worth `spent` (milliunits of
        /// the item's currency) in the span.
        func admits(value: Money?, decided: Int, spent: Int64) -> Bool {
            if let items, decided + 1 > items { return false }
            guard let amountMilli else { return true }
            guard let value, let cap = amountMilli[value.currency] else { return false }
            return spent + value.milli <= cap
        }
    }

    /// The rule's `limits`.
    public struct Limits: Sendable, Equatable {
        /// What it may decide for one account in 24 hours, across every process and run.
        public var perAccountPerDay: Limit?
        /// What it may decide in one nightly run's budget: the run's decisions and those of the
        /// notification receiver's passes after it, until the next nightly run, together.
        public var perRun: Limit?

        public init(perAccountPerDay: Limit? = nil, perRun: Limit? = nil) {
            self.perAccountPerDay = perAccountPerDay
            self.perRun = perRun
        }
    }
}

extension BulkDecision.Decision {
    /// The decision as a policy file spells it: a resolution's name, or `dismissed`.
    public var policyName: String {
        switch self {
        case .resolve(let resolution): resolution.rawValue
        case .dismiss: "dismissed"
        }
    }
}
