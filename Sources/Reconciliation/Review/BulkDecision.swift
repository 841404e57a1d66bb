import Crypto
import Foundation
import Postgres

/// Deciding many items at once (`review resolve|dismiss` with a filter): the outage day's thousands
/// of `missed_delivery` items granted by one command. Each item is decided exactly as a single
/// decision is (``ReviewDecisions/resolve(id:resolution:by:note:seen:)``: one event, one outbox row,
/// its finding judged again first, refused if already decided), a hundred to a transaction, so a
/// command interrupted half-way and run again takes only what is left and repeats nothing.
public struct BulkDecision: Sendable {
    /// The most items one command decides unless told otherwise (`RECONCILE_BULK_LIMIT`).
    public static let defaultLimit = 5_000

    /// What to do with each item.
    public enum Decision: Sendable, Equatable {
        case resolve(Resolution)
        case dismiss
    }

    /// Which items: the filter's, that the person may decide now (open, or claimed by them).
    public var filter: ReviewFilter
    /// Who decides.
    public var person: String
    /// At most this many items; a filter matching more is refused before anything is decided.
    public var limit: Int
    /// `RECONCILE_APPROVAL_ABOVE`: items above it go to `awaiting_approval`, as a single decision's
    /// would (``ReviewDecisions/approval``).
    public var approval: ApprovalThreshold
    /// How each decision judges its item again first, as a single decision's does.
    var judgement: DecisionJudgement
    /// The command line's operating-system login, recorded with each decision
    /// (``ReviewDecisions/osLogin``); nil for the pages.
    public var osLogin: String?

    public init(
        filter: ReviewFilter, person: String, limit: Int = BulkDecision.defaultLimit, approval: ApprovalThreshold,
        judgement: DecisionJudgement
    ) {
        self.filter = filter
        self.person = person
        self.limit = limit
        self.approval = approval
        self.judgement = judgement
    }

    /// The items a bulk decision would take, in sum.
    public struct Preview: Sendable, Equatable {
        /// How many items.
        public var items: Int
        /// Their value per currency (milliunits), currencies in order; items of unknown value apart.
        public var valueByCurrency: [(currency: String, items: Int, amountMilli: Int64)]
        /// Items whose value is unknown.
        public var unknownValue: Int
        /// The first few, oldest first.
        public var first: [Candidate]
        /// How many of each kind, kinds in order: a decision the kinds do not all allow is refused
        /// for the others (``FindingKind/allowedResolutions``), and the confirmation says so.
        public var byKind: [(kind: FindingKind, items: Int)] = []

        /// The resolutions every kind of the selection allows.
        public var allowedResolutions: [Resolution] {
            Resolution.allCases.filter { resolution in byKind.allSatisfy { $0.kind.allowedResolutions.contains(resolution) } }
        }

        public static func == (lhs: Preview, rhs: Preview) -> Bool {
            lhs.items == rhs.items && lhs.unknownValue == rhs.unknownValue && lhs.first == rhs.first
                && lhs.byKind.map { "\($0.kind) \($0.items)" } == rhs.byKind.map { "\($0.kind) \($0.items)" }
                && lhs.valueByCurrency.map { "\($0.currency) \($0.items) \($0.amountMilli)" }
                    == rhs.valueByCurrency.map { "\($0.currency) \($0.items) \($0.amountMilli)" }
        }
    }

    /// One item a bulk decision takes.
    public struct Candidate: Sendable, Equatable {
        public var id: Int64
        public var kind: String
        public var transactionID: String?
        public var userID: String?
        public var productID: String?
        public var amountMilli: Int64?
        public var currency: String?
    }

    /// What a bulk decision did.
    public struct Outcome: Sendable, Equatable {
        /// Items decided by this command (those waiting for approval included).
        public var decided = 0
        /// Of these, items whose decision waits for a second person (above the approval threshold).
        public var awaitingApproval = 0
        /// Items another decision took between the preview and this command's turn (refused, left as
        /// they are).
        public var skipped: [(id: Int64, reason: String)] = []

        public static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            lhs.decided == rhs.decided && lhs.awaitingApproval == rhs.awaitingApproval
                && lhs.skipped.map(\.id) == rhs.skipped.map(\.id)
        }
    }

    /// A bulk decision would take more items than its limit.
    public struct TooMany: Error, CustomStringConvertible {
        public var matching: Int
        public var limit: Int

        public init(matching: Int, limit: Int) {
            self.matching = matching
            self.limit = limit
        }
        public var description: String {
            "the filter matches \(matching) items, over the limit of \(limit) for one command: narrow the filter, "
                + "or raise the limit (--limit, RECONCILE_BULK_LIMIT)"
        }
    }

    /// The items a confirmed decision was to take are no longer the ones the filter takes.
    public struct SelectionChanged: Error, CustomStringConvertible {
        public init() {}
        public var description: String {
            "the items selected changed since they were confirmed (decided, claimed or new meanwhile): "
                + "look at the selection again"
        }
    }

    /// Names exactly the items the filter takes now (at most the limit and one more): a SHA-256, in
    /// hex, of each one's id and value, in order. A confirmation page carries it, so that its POST
    /// decides only the items the person saw, for the value they saw (``run(_:note:on:confirming:progress:)``);
    /// a count alone could name other items.
    public func digest(on connection: Connection) throws -> String {
        let person = try ReviewActor.validatedName(person)
        return Self.digest(try candidates(limit: limit + 1, actor: person, on: connection))
    }

    static func digest(_ candidates: [Candidate]) -> String {
        var hash = SHA256()
        for item in candidates {
            hash.update(data: Data("\(item.id) \(item.amountMilli.map(String.init) ?? "-") \(item.currency ?? "-")\n".utf8))
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// How many items the filter takes, their value per currency, and the first `first` of them.
    public func preview(on connection: Connection, first: Int = 5) throws -> Preview {
        let person = try ReviewActor.validatedName(person)
        var preview = Preview(items: 0, valueByCurrency: [], unknownValue: 0, first: [])
        var kinds: [FindingKind: Int] = [:]
        for row in try connection.query(ReviewSQL.bulkSummary, values(actor: person)) {
            let items: Int = try row["items"]
            preview.items += items
            kinds[try row["kind"], default: 0] += items
            if let currency: String = try row["currency"], let amount: Int64 = try row["amount_milli"] {
                if let last = preview.valueByCurrency.last, last.currency == currency {
                    preview.valueByCurrency[preview.valueByCurrency.count - 1] =
                        (currency, last.items + items, last.amountMilli + amount)
                } else {
                    preview.valueByCurrency.append((currency, items, amount))
                }
            } else {
                preview.unknownValue += items
            }
        }
        preview.byKind = FindingKind.allCases.compactMap { kind in kinds[kind].map { (kind, $0) } }
        preview.first = try candidates(limit: first, actor: person, on: connection)
        return preview
    }

    /// The ids of every item the filter takes now (at most the limit, and one more to tell that it
    /// is over), oldest first: what a person confirms, to be passed back to ``run(_:note:only:on:progress:)``.
    public func confirmable(on connection: Connection) throws -> [Int64] {
        try candidates(limit: limit + 1, actor: try ReviewActor.validatedName(person), on: connection).map(\.id)
    }

    /// The same decision over only those of `ids` the filter takes (ReviewFilter.ids narrows it);
    /// nil when none can be: an empty `ids` would otherwise mean no narrowing at all.
    public func narrowed(to ids: [Int64]) -> BulkDecision? {
        let kept = filter.ids.isEmpty ? ids : filter.ids.filter(Set(ids).contains)
        guard !kept.isEmpty else { return nil }
        var narrowed = self
        narrowed.filter.ids = kept
        return narrowed
    }

    /// Decides every item the filter takes, oldest first, a ``chunk`` of them to a transaction;
    /// `progress` hears after each item how many of how many are done (committed with the item's
    /// chunk; cancelled, the chunk commits what it decided). Refused (`TooMany`) before anything is
    /// decided when the filter takes more than the limit. Cancellation stops between items.
    ///
    /// `only`: the items the person confirmed (``confirmable(on:)``): nothing else is decided, so
    /// an item a run or the receiver opened after the preview waits for its own decision; those of
    /// them that no longer match (decided or claimed meanwhile) are skipped. An item claimed by
    /// another person between this command's selection and its turn is skipped too, never taken.
    ///
    /// `confirming` (a ``digest(on:)`` taken when the selection was shown, as the queue page's
    /// confirmation does): refused (`SelectionChanged`) before anything is decided unless the
    /// items taken now are exactly those, with the same values; then only they are decided.
    public func run(
        _ decision: Decision, note: String?, only confirmed: [Int64]? = nil, on connection: Connection,
        confirming digest: String? = nil,
        progress: (_ done: Int, _ of: Int) -> Void = { _, _ in }
    ) throws -> Outcome {
        let person = try ReviewActor.validatedName(person)
        var outcome = Outcome()
        var selection = self
        if let confirmed {
            guard let narrowed = narrowed(to: confirmed) else {
                outcome.skipped = confirmed.map { ($0, "item \($0) no longer matches the filter") }
                return outcome
            }
            selection = narrowed
        }
        let candidates = try selection.candidates(limit: limit + 1, actor: person, on: connection)
        if let confirmed {
            let matching = Set(candidates.map(\.id))
            for id in confirmed where !matching.contains(id) {
                outcome.skipped.append((id, "item \(id) no longer matches: decided, claimed or changed since the preview"))
            }
        }
        guard candidates.count <= limit else {
            throw TooMany(matching: try preview(on: connection, first: 0).items, limit: limit)
        }
        if let digest, digest != Self.digest(candidates) { throw SelectionChanged() }
        // Checked on the locked item, in its decision's transaction: an item is taken only while it is
        // open or claimed by this person (reconcile.review_item_decidable_by, migration 0030: the rule
        // bulk_candidates.sql listed it by).
        let decider = ReviewDecisions.Decider(actor: .person(person), admit: { item in
            if item.status == .inReview, let assignee = item.assignee, assignee != person {
                throw ReviewError.claimedBySomeoneElse(id: item.id, assignee: assignee)
            }
        })
        // A decision that makes the app act judges its item again with the nightly rules (SPEC
        // section 6). Judged one by one, 5,000 items took 5,000 diffs: the items are decided a
        // chunk at a time in one transaction, their transactions judged together once, each
        // decided as a single decision is (one event, one outbox row, refused alone: a refusal
        // writes nothing but the item's refresh from its finding).
        let acts = if case .resolve(let resolution) = decision { resolution.action != nil } else { false }
        var done = 0
        for chunk in stride(from: 0, to: candidates.count, by: Self.chunk).map({
            candidates[$0..<min($0 + Self.chunk, candidates.count)]
        }) {
            if Task.isCancelled { break }
            try connection.transaction {
                let judged = acts
                    ? try judgement.judgingOnce(chunk.compactMap(\.transactionID), on: connection) ?? judgement
                    : judgement
                var service = ReviewDecisions(connection: connection, approval: approval, judgement: judged)
                service.osLogin = osLogin
                for candidate in chunk {
                    if Task.isCancelled { break }
                    do {
                        let result = try service.decide(decision, id: candidate.id, as: decider, note: note)
                        if result.changed { outcome.decided += 1 }
                        if result.changed, result.item.status == .awaitingApproval { outcome.awaitingApproval += 1 }
                    } catch let error as ReviewError {
                        switch error {
                        case .invalidInput: throw error
                        // The item's own reason (decided meanwhile, claimed by another, its finding
                        // gone, no buyer to grant to): this item is left as it is, the others go on.
                        default: outcome.skipped.append((candidate.id, error.description))
                        }
                    }
                    done += 1
                    progress(done, candidates.count)
                }
            }
        }
        return outcome
    }

    /// How many items one transaction of a bulk decision decides (their transactions judged once).
    static let chunk = 100

    private func values(actor: String) -> SQLValues {
        var values = filter.values()
        values["actor"] = actor
        return values
    }

    private func candidates(limit: Int, actor: String, on connection: Connection) throws -> [Candidate] {
        var values = values(actor: actor)
        values["limit"] = Int64(limit)
        return try connection.query(ReviewSQL.bulkCandidates, values).map { row in
            Candidate(
                id: try row["id"], kind: try row["kind"], transactionID: try row["transaction_id"],
                userID: try row["user_id"], productID: try row["product_id"], amountMilli: try row["amount_milli"],
                currency: try row["currency"])
        }
    }
}

extension ReviewDecisions {
    /// Resolves or dismisses one item: ``resolve(id:resolution:by:note:)`` or ``dismiss(id:by:note:)``.
    public func decide(
        _ decision: BulkDecision.Decision, id: Int64, by person: String, note: String?
    ) throws -> TransitionOutcome {
        try decide(decision, id: id, as: .person(person), note: note)
    }

    /// Resolves or dismisses one item as `decider`.
    func decide(_ decision: BulkDecision.Decision, id: Int64, as decider: Decider, note: String?) throws -> TransitionOutcome {
        switch decision {
        case .resolve(let resolution): try resolve(id: id, resolution: resolution, as: decider, note: note)
        case .dismiss: try dismiss(id: id, as: decider, note: note)
        }
    }
}
