import Foundation
import Postgres

/// The review queue's decisions (SPEC sections 6–8): the one place where items are claimed,
/// resolved, approved, rejected and dismissed, used by `reconcile review`, `reconcile serve`, the
/// bulk decisions and the policies alike. Reading the queue is ``ReviewQueue``'s.
///
/// Every transition locks the item (`SELECT … FOR UPDATE`), checks its state, and writes the new
/// state, a `review_events` row and, for a decision the app must act on, one `action_outbox` row,
/// all in one transaction. Repeating a command that already took effect changes nothing and
/// succeeds, so a retried click or a re-run script never enqueues an action twice.
public struct ReviewDecisions {
    let connection: Connection
    /// `RECONCILE_APPROVAL_ABOVE`: a decision above it waits for a second person. Every decider
    /// (a person, a bulk command, a policy) comes through ``resolve(id:resolution:by:note:)``, so
    /// the gate is here and nowhere else. A decision applies the stricter of this and the threshold
    /// recorded in the database, which it records first where this one is stricter
    /// (``ApprovalThreshold/record(on:by:)``).
    public let approval: ApprovalThreshold
    /// How a decision that makes the app act judges its item again first (SPEC section 6).
    let judgement: DecisionJudgement
    /// The operating-system login of whoever runs the command line (where `--by` is only a claim),
    /// recorded with every event these decisions write and with a decision that waits; an approval
    /// from the login that made the decision is refused like one's own. Nil for the pages (their
    /// session proves the name) and the job.
    public var osLogin: String?

    /// Decisions on one connection; use it from one task at a time, like the connection. The
    /// threshold and the judgement have no default on purpose: whoever builds one says
    /// which hold (``ApprovalThreshold/none`` where none is configured; the settings' rules), so
    /// none is dropped by omission.
    public init(connection: Connection, approval: ApprovalThreshold, judgement: DecisionJudgement) {
        self.connection = connection
        self.approval = approval
        self.judgement = judgement
    }

    // MARK: Transitions

    /// Claims an item for `person`: `open` → `in_review`. Claiming one's own claim again changes
    /// nothing; taking over someone else's claim needs `force` and is recorded as an event.
    public func claim(id: Int64, by person: String, force: Bool = false) throws -> TransitionOutcome {
        let person = try ReviewActor.validatedName(person)
        return try connection.transaction {
            let item = try lockedItem(id)
            switch item.status {
            case .open:
                _ = try recordEvent(item, by: person, to: .inReview, note: nil, details: ["assignee": person])
                let updated = try update(ReviewSQL.claim, ["id": id, "assignee": person])
                return TransitionOutcome(item: updated, changed: true, outbox: nil, message: "claimed item \(id) for \(person)")
            case .inReview where item.assignee == person:
                return TransitionOutcome(
                    item: item, changed: false, outbox: nil, message: "item \(id) is already claimed by \(person)")
            case .inReview:
                guard force else {
                    throw ReviewError.claimedBySomeoneElse(id: id, assignee: item.assignee ?? "someone")
                }
                _ = try recordEvent(
                    item, by: person, to: .inReview, note: "taken over from \(item.assignee ?? "nobody")",
                    details: ["assignee": person, "previous_assignee": item.assignee ?? ""])
                let updated = try update(ReviewSQL.takeOver, ["id": id, "assignee": person])
                return TransitionOutcome(
                    item: updated, changed: true, outbox: nil,
                    message: "took item \(id) over from \(item.assignee ?? "nobody") for \(person)")
            case .awaitingApproval:
                throw Self.waiting(item)
            case .resolved, .dismissed:
                throw Self.decided(item)
            case .autoResolved:
                throw ReviewError.autoResolved(id: id)
            }
        }
    }

    /// Resolves an item (`open` or `in_review` → `resolved`) and, for `granted`, `revoked` and
    /// `moved`, enqueues the one action the app must carry out. Repeating the same resolution by
    /// the same person is a no-op success; any other decision on a decided item is refused.
    ///
    /// When the decision would make the app act and the item's value is above ``approval``, it
    /// does not take effect: the item goes to `awaiting_approval` with the decision kept as
    /// pending, and no outbox row is written until another person runs
    /// ``approve(id:by:note:seen:)``. A decision the evidence cannot turn into an action is refused
    /// here, to its decider, not later to the approver.
    ///
    /// Before a decision that makes the app act is taken, the item's transaction is judged again
    /// with the nightly rules, in the same transaction (``DecisionJudgement``): when the finding no
    /// longer holds, nothing is queued, the item is auto-resolved with what changed, and
    /// ``ReviewError/findingGone(id:resolution:now:)`` tells the decider; when it holds, the action
    /// is drafted from the finding as it is now. `seen` is the action a page showed the person
    /// (``ActionDraft``): when the action drafted now is another, nothing changes
    /// (``ReviewError/actionChanged(id:was:now:)``). A resolution the item's kind does not allow
    /// (``FindingKind/allowedResolutions``) is refused.
    public func resolve(
        id: Int64, resolution: Resolution, by person: String, note: String?, seen: ActionDraft? = nil
    ) throws -> TransitionOutcome {
        try resolve(id: id, resolution: resolution, as: .person(person), note: note, seen: seen)
    }

    /// Resolves an item as `decider` (a person, or a policy rule that first checks the locked item).
    func resolve(
        id: Int64, resolution: Resolution, as decider: Decider, note: String?, seen: ActionDraft? = nil
    ) throws -> TransitionOutcome {
        let person = decider.name
        let note = try ReviewNote.validated(note, required: false)
        let decided = try decision { () throws -> Decided in
            var item = try lockedItem(id)
            try decider.admit?(item)
            let waitingAlready = item.status == .awaitingApproval && item.pending?.resolution == resolution
                && item.pending?.by == person
            let repeated = waitingAlready
                || (item.status == .resolved && item.resolution == resolution && item.resolvedBy == person)
            if let outcome = try undecided(item, unless: repeated, {
                TransitionOutcome(
                    item: item, changed: false, outbox: try OutboxEntry.ofItem(id, on: connection),
                    message: waitingAlready
                        ? "item \(id) already waits for approval of \(resolution.rawValue) by \(person); nothing to do"
                        : "item \(id) is already resolved as \(resolution.rawValue) by \(person); nothing to do")
            }) {
                return .done(outcome)
            }
            try Self.allow(resolution, on: item)
            if resolution.action != nil {
                switch try judged(item, by: person, deciding: resolution, run: decider.runID) {
                case .holds(let now): item = now
                case .gone(let now): return .gone(resolution, now: now)
                case .held: throw Self.held(item)
                }
            }
            let draft = try ActionDraft.drafted(for: item, resolution: resolution, on: connection)
            if let seen, seen != draft {
                throw ReviewError.actionChanged(id: id, was: seen.description, now: draft?.description ?? "nothing")
            }
            let approval = draft == nil ? approval : try approval.record(
                on: connection, by: ApprovalThreshold.process("decision by \(person)", login: osLogin))
            if draft != nil, approval.isExceeded(by: item.value) {
                _ = try recordEvent(
                    item, by: person, to: .awaitingApproval, note: note,
                    details: ["resolution": resolution.rawValue, "approval_above": approval.description,
                              "value": item.value?.text() ?? "unknown"],
                    run: decider.runID)
                let updated = try update(
                    ReviewSQL.awaitApproval,
                    ["id": id, "resolution": resolution.rawValue, "person": person, "note": note,
                     "action": try draft.map { try PostgresJSON(encoding: $0) }, "os_login": osLogin])
                Failpoint.pass("review.decide")
                return .done(TransitionOutcome(
                    item: updated, changed: true, outbox: nil,
                    message: "item \(id) (\(item.value?.text() ?? "value unknown")) is above RECONCILE_APPROVAL_ABOVE "
                        + "(\(approval)): \(resolution.rawValue) waits for another person's approval "
                        + "(reconcile review approve \(id))"))
            }
            let event = try recordEvent(
                item, by: person, to: .resolved, note: note, details: Self.details(resolution, draft), run: decider.runID)
            let updated = try update(
                ReviewSQL.resolve, ["id": id, "resolution": resolution.rawValue, "person": person, "note": note])
            let entry = try enqueue(draft, item: item, event: event, decidedBy: person, note: note)
            Failpoint.pass("review.decide")
            var message = "resolved item \(id) as \(resolution.rawValue)"
            if let entry { message += "; queued \(entry.actionDescription) for the app" }
            return .done(TransitionOutcome(item: updated, changed: true, outbox: entry, message: message))
        }
        return try decided.outcome(id: id)
    }

    /// What a decision's transaction ended with: taken (or repeated), or the item's finding gone
    /// (the item auto-resolved, committed, and the decider told by throwing after the commit).
    enum Decided {
        case done(TransitionOutcome)
        case gone(Resolution, now: String)
        case sentBack(was: String, now: String)

        func outcome(id: Int64) throws -> TransitionOutcome {
            switch self {
            case .done(let outcome): return outcome
            case .gone(let resolution, let now): throw ReviewError.findingGone(id: id, resolution: resolution, now: now)
            case .sentBack(let was, let now): throw ReviewError.approvalOutdated(id: id, was: was, now: now)
            }
        }
    }

    /// Judges the locked `item` again (``DecisionJudgement``); when its finding is gone, auto-resolves it
    /// with an event of the job's saying what changed and who was deciding what.
    func judged(
        _ item: ReviewItem, by person: String, deciding resolution: Resolution, run: Int64?
    ) throws -> DecisionJudgement.Verdict {
        let verdict = try judgement.judge(item, on: connection)
        if case .gone(let now) = verdict {
            _ = try recordEvent(
                item, by: ReviewActor.jobName, to: .autoResolved,
                note: "condition no longer detected when judged again for \(person)'s decision "
                    + "(\(resolution.rawValue)): \(now)",
                details: ["resolution": resolution.rawValue, "decided_by": person], run: run)
            _ = try update(ReviewSQL.autoResolveStale, ["id": item.id])
        }
        return verdict
    }

    static func held(_ item: ReviewItem) -> ReviewError {
        .notJudgedNow(
            id: item.id, reason: "an upload of its transaction or account is still being verified, so the rules "
                + "cannot say now whether the finding holds; decide it after the next run")
    }

    /// Refuses a resolution the item's kind does not allow (SPEC section 6: `granted` on a
    /// `duplicate_delivery`), saying which it allows.
    static func allow(_ resolution: Resolution, on item: ReviewItem) throws {
        let allowed = item.kind.allowedResolutions
        guard !allowed.contains(resolution) else { return }
        throw ReviewError.resolutionNotAllowed(
            id: item.id, kind: item.kind, resolution: resolution,
            allowed: Resolution.allCases.filter(allowed.contains))
    }

    /// A second person approves the decision waiting on an item (`awaiting_approval` →
    /// `resolved`): it takes effect exactly as decided (the decider's resolution and note; the
    /// item's `resolved_by` stays the decider, `approved_by` is `person`) and writes its outbox
    /// row, in one transaction. The decider cannot approve their own decision
    /// (``ReviewError/ownDecision(id:by:)``), nor can a policy approve. Approving again by the
    /// same person is a no-op success.
    ///
    /// `seen` is the decision the approver was shown (the item page sends it): when the decision
    /// waiting now is another (withdrawn and decided again meanwhile), nothing changes
    /// (``ReviewError/decisionChanged(id:resolution:by:)``). Without it (the CLI, which shows
    /// what it approved) the decision waiting now is approved.
    public func approve(id: Int64, by person: String, note: String? = nil, seen: SeenDecision? = nil) throws
        -> TransitionOutcome
    {
        // A policy cannot approve: its name (`policy:…`) is no person's name.
        let person = try ReviewActor.validatedName(person)
        let note = try ReviewNote.validated(note, required: false)
        let decided = try connection.transaction { () throws -> Decided in
            var item = try lockedItem(id)
            switch item.status {
            case .awaitingApproval:
                let pending = try waitingDecision(item, seen: seen)
                guard !Self.samePerson(pending.by, person) else { throw ReviewError.ownDecision(id: id, by: pending.by) }
                // On the command line the name is only a claim: the login that decided cannot approve.
                if let osLogin, let row = try connection.queryFirst(ReviewSQL.pendingOSLogin, ["id": id]),
                    let decidedFrom = try row["pending_os_login", as: String?.self], osLogin == decidedFrom
                {
                    throw ReviewError.ownDecision(id: id, by: "\(pending.by) from the operating-system login \(decidedFrom)")
                }
                // Approved, the decision takes effect as it was decided on what is true now, or
                // not at all (SPEC sections 6 and 17).
                if pending.resolution.action != nil {
                    switch try judged(item, by: pending.by, deciding: pending.resolution, run: nil) {
                    case .holds(let now): item = now
                    case .gone(let now): return .gone(pending.resolution, now: now)
                    case .held: throw Self.held(item)
                    }
                }
                let decidedAction = try pendingAction(id)
                let draft: ActionDraft?
                do {
                    draft = try ActionDraft.drafted(for: item, resolution: pending.resolution, on: connection)
                } catch ReviewError.actionNotApplicable(_, _, let reason) {
                    return try sendBack(item, pending: pending, by: person, was: decidedAction, now: reason)
                }
                if pending.resolution.action != nil, decidedAction != draft {
                    return try sendBack(item, pending: pending, by: person, was: decidedAction,
                                        now: draft?.description ?? "nothing")
                }
                var details = Self.details(pending.resolution, draft)
                details["decided_by"] = pending.by
                details["decided_at"] = TimeExpression.format(pending.at)
                let event = try recordEvent(item, by: person, to: .resolved, note: note, details: details)
                let updated = try update(ReviewSQL.approve, ["id": id, "person": person])
                let entry = try enqueue(draft, item: item, event: event, decidedBy: pending.by, note: pending.note)
                Failpoint.pass("review.decide")
                var message = "approved \(pending.by)'s decision: resolved item \(id) as \(pending.resolution.rawValue)"
                if let entry { message += "; queued \(entry.actionDescription) for the app" }
                return .done(TransitionOutcome(item: updated, changed: true, outbox: entry, message: message))
            case .resolved where item.approvedBy == person:
                return .done(TransitionOutcome(
                    item: item, changed: false, outbox: try OutboxEntry.ofItem(id, on: connection),
                    message: "item \(id) is already approved by \(person); nothing to do"))
            case .open, .inReview, .resolved, .dismissed:
                throw ReviewError.notAwaitingApproval(id: id, status: item.status)
            case .autoResolved:
                throw ReviewError.autoResolved(id: id)
            }
        }
        return try decided.outcome(id: id)
    }

    /// The decision waiting on the locked `item` (approve's and reject's common opening): the one
    /// the person was shown (`seen`, when the page sent it), else ``ReviewError/decisionChanged(id:resolution:by:)``.
    func waitingDecision(_ item: ReviewItem, seen: SeenDecision?) throws -> PendingDecision {
        guard let pending = item.pending else { throw ReviewError.notAwaitingApproval(id: item.id, status: item.status) }
        try Self.check(seen, against: pending, id: item.id)
        return pending
    }

    /// What the decision waiting on item `id` would make the app do, as its decider was shown it.
    func pendingAction(_ id: Int64) throws -> ActionDraft? {
        guard let text: String = try connection.queryFirst(ReviewSQL.pendingAction, ["id": id])?["pending_action"] else {
            return nil
        }
        return try JSONDecoder().decode(ActionDraft.self, from: Data(text.utf8))
    }

    /// An approval whose decision would now do something else than its decider was shown (`was`):
    /// nothing takes effect, and the item goes back to open for a person to decide anew.
    func sendBack(
        _ item: ReviewItem, pending: PendingDecision, by person: String, was: ActionDraft?, now: String
    ) throws -> Decided {
        let was = was?.description ?? "unknown (decided before this release kept it)"
        _ = try recordEvent(
            item, by: person, to: .open,
            note: "approval refused: what the decision would make the app do changed since it was decided; "
                + "was \(was), now \(now)",
            details: ["rejected_resolution": pending.resolution.rawValue, "decided_by": pending.by, "was": was,
                      "now": now])
        _ = try update(ReviewSQL.reject, ["id": item.id])
        return .sentBack(was: was, now: now)
    }

    /// A second person rejects the decision waiting on an item (`awaiting_approval` → `open`):
    /// nothing takes effect, the item is open and unclaimed again, and the reason (required) is
    /// the event's note. The decider may reject their own decision, which withdraws it.
    /// Rejecting again by the same person is a no-op success. `seen` is checked as
    /// ``approve(id:by:note:seen:)`` checks it.
    public func reject(id: Int64, by person: String, note: String?, seen: SeenDecision? = nil) throws
        -> TransitionOutcome
    {
        let person = try ReviewActor.validatedName(person)
        let note = try ReviewNote.validated(note, required: true)
        return try connection.transaction {
            let item = try lockedItem(id)
            switch item.status {
            case .awaitingApproval:
                let pending = try waitingDecision(item, seen: seen)
                _ = try recordEvent(
                    item, by: person, to: .open, note: note,
                    details: ["rejected_resolution": pending.resolution.rawValue, "decided_by": pending.by])
                let updated = try update(ReviewSQL.reject, ["id": id])
                return TransitionOutcome(
                    item: updated, changed: true, outbox: nil,
                    message: "rejected \(pending.by)'s decision (\(pending.resolution.rawValue)) on item \(id); it is open again")
            case .open:
                let last = try connection.query(ReviewSQL.events, ["id": id]).last.map(ReviewEvent.init(row:))
                guard let last, last.fromStatus == .awaitingApproval, last.actor == person else {
                    throw ReviewError.notAwaitingApproval(id: id, status: item.status)
                }
                return TransitionOutcome(
                    item: item, changed: false, outbox: nil,
                    message: "item \(id) is already rejected by \(person); nothing to do")
            case .inReview, .resolved, .dismissed:
                throw ReviewError.notAwaitingApproval(id: id, status: item.status)
            case .autoResolved:
                throw ReviewError.autoResolved(id: id)
            }
        }
    }

    /// Dismisses an item (`open` or `in_review` → `dismissed`): not a real problem, nothing to do.
    /// A note saying why is required. Repeating it by the same person is a no-op success. A
    /// dismissal never waits for approval, whatever the item's value: it makes the app do nothing
    /// (no outbox row), and the approval exists to stop one person making the app hand out or
    /// take back value (docs/operations.md).
    public func dismiss(id: Int64, by person: String, note: String?) throws -> TransitionOutcome {
        try dismiss(id: id, as: .person(person), note: note)
    }

    /// Dismisses an item as `decider` (a person, or a policy rule that first checks the locked item).
    func dismiss(id: Int64, as decider: Decider, note: String?) throws -> TransitionOutcome {
        let person = decider.name
        let note = try ReviewNote.validated(note, required: true)
        return try decision {
            let item = try lockedItem(id)
            try decider.admit?(item)
            if let outcome = try undecided(item, unless: item.status == .dismissed && item.resolvedBy == person, {
                TransitionOutcome(
                    item: item, changed: false, outbox: nil,
                    message: "item \(id) is already dismissed by \(person); nothing to do")
            }) {
                return outcome
            }
            _ = try recordEvent(item, by: person, to: .dismissed, note: note, details: [:], run: decider.runID)
            let updated = try update(ReviewSQL.dismiss, ["id": id, "person": person, "note": note])
            Failpoint.pass("review.decide")
            return TransitionOutcome(item: updated, changed: true, outbox: nil, message: "dismissed item \(id)")
        }
    }

    // MARK: Plumbing

    /// Runs a decision's work in a transaction of its own or, inside the caller's (a bulk
    /// decision's hundred items, judged again together: ``BulkDecision/run(_:note:only:on:confirming:progress:)``),
    /// as part of it. A refusal there leaves at most the item's refresh from its finding as
    /// judged now, which is what the next run would write.
    func decision<T>(_ body: () throws -> T) throws -> T {
        connection.isInTransaction ? try body() : try connection.transaction(body)
    }

    /// Refuses an approval or rejection from a page that showed another decision than `pending`.
    static func check(_ seen: SeenDecision?, against pending: PendingDecision, id: Int64) throws {
        guard let seen, !seen.matches(pending) else { return }
        throw ReviewError.decisionChanged(id: id, resolution: pending.resolution, by: pending.by)
    }

    func lockedItem(_ id: Int64) throws -> ReviewItem {
        guard let row = try connection.queryFirst(ReviewSQL.lockItem, ["id": id]) else { throw ReviewError.notFound(id: id) }
        return try ReviewItem(row: row)
    }

    /// Runs one of the item's updates (each returns the row) and reads the item it leaves.
    func update(_ file: SQLFile, _ values: SQLValues) throws -> ReviewItem {
        try ReviewItem(row: connection.query(file, values)[0])
    }

    /// Appends the event of a transition and returns its id.
    func recordEvent(
        _ item: ReviewItem, by person: String, to status: ReviewStatus, note: String?, details: [String: String],
        run: Int64? = nil
    ) throws -> Int64 {
        try connection.query(
            ReviewSQL.recordEvent,
            ["item_id": item.id, "actor": person, "from_status": item.status.rawValue, "to_status": status.rawValue,
             "note": note, "details": details.isEmpty ? nil : try PostgresJSON(encoding: details), "run_id": run,
             "os_login": osLogin]
        )[0].decode(Int64.self, at: 0)
    }

    /// The event details of a resolution: the resolution, and the action it makes the app take.
    static func details(_ resolution: Resolution, _ draft: ActionDraft?) -> [String: String] {
        var details: [String: String] = ["resolution": resolution.rawValue]
        if let draft {
            details["action"] = draft.action.rawValue
            details["from_user_id"] = draft.fromUserID
            details["to_user_id"] = draft.toUserID
        }
        return details
    }

    /// Writes the outbox row of a decision that took effect, if it makes the app act.
    func enqueue(
        _ draft: ActionDraft?, item: ReviewItem, event: Int64, decidedBy: String, note: String?
    ) throws -> OutboxEntry? {
        guard let draft else { return nil }
        return try connection.queryFirst(
            ReviewSQL.enqueueAction,
            ["item_id": item.id, "event_id": event, "action": draft.action.rawValue, "transaction_id": item.transactionID,
             "product_id": draft.productID, "quantity": draft.quantity, "from_user_id": draft.fromUserID,
             "to_user_id": draft.toUserID, "decided_by": decidedBy, "note": note]
        ).map(OutboxEntry.init(row:))
    }

    /// The guard of every decision: nil when the item is open or in review (decide it); the
    /// `again` outcome when the same decision by the same person already took effect (nothing
    /// is written again); otherwise the refusal (decided by someone or something else).
    func undecided(
        _ item: ReviewItem, unless repeated: Bool, _ again: () throws -> TransitionOutcome
    ) throws -> TransitionOutcome? {
        switch item.status {
        case .open, .inReview: return nil
        case _ where repeated: return try again()
        case .awaitingApproval: throw Self.waiting(item)
        case .resolved, .dismissed: throw Self.decided(item)
        case .autoResolved: throw ReviewError.autoResolved(id: item.id)
        }
    }

    static func waiting(_ item: ReviewItem) -> ReviewError {
        .awaitingApproval(id: item.id, resolution: item.pending?.resolution, by: item.pending?.by)
    }

    /// Names compare as people read them: `Mei` approving `mei`'s decision is the same person.
    static func samePerson(_ a: String, _ b: String) -> Bool {
        a.caseInsensitiveCompare(b) == .orderedSame
    }

    static func decided(_ item: ReviewItem) -> ReviewError {
        .alreadyDecided(
            id: item.id, status: item.status, resolution: item.resolution, by: item.resolvedBy, at: item.resolvedAt)
    }

    /// Who decides: a person by a validated name, or a policy rule (SPEC section 17) recorded as
    /// `policy:<name>` with the run whose pass decided, which checks the locked item before
    /// anything is written and throws to leave it as it is (claimed, over a limit).
    struct Decider {
        /// The actor recorded (`resolved_by`, the event, the outbox's `decided_by`).
        let actor: ReviewActor
        /// Its recorded name.
        var name: String { actor.name }
        /// The run recorded with the event; nil for a person.
        var runID: Int64? = nil
        /// Runs on the locked item inside the decision's transaction; nil for a person.
        var admit: ((ReviewItem) throws -> Void)? = nil

        static func person(_ name: String) throws -> Decider { Decider(actor: try .person(validating: name)) }
    }
}
