import Foundation
import Postgres

/// The review queue for support staff (SPEC sections 6–8): the one place where items are listed,
/// shown, claimed, resolved and dismissed, used by `reconcile review` and by `reconcile serve` alike.
///
/// Every transition locks the item (`SELECT … FOR UPDATE`), checks its state, and writes the new
/// state, a `review_events` row and, for a decision the app must act on, one `action_outbox` row,
/// all in one transaction. Repeating a command that already took effect changes nothing and
/// succeeds, so a retried click or a re-run script never enqueues an action twice.
public struct ReviewService {
    /// Longest note kept; a note is for a sentence or two, not a document.
    public static let maximumNoteLength = 2000
    /// Longest actor name.
    public static let maximumNameLength = 200
    /// Largest page.
    public static let maximumPageSize = 500
    /// Highest page number: far beyond any queue (500 million items at the largest page size),
    /// and low enough that `(page - 1) * limit` can never overflow.
    public static let maximumPage = 1_000_000

    private let connection: Connection
    /// `RECONCILE_APPROVAL_ABOVE`: a decision above it waits for a second person. Every decider
    /// (a person, a bulk command, a policy) comes through ``resolve(id:resolution:by:note:)``, so
    /// the gate is here and nowhere else. A decision applies the stricter of this and the threshold
    /// recorded in the database, which it records first where this one is stricter
    /// (``ApprovalThreshold/record(on:by:)``).
    public let approval: ApprovalThreshold
    /// How a decision that makes the app act judges its item again first (SPEC section 6).
    let judgement: DecisionJudgement
    /// The operating-system login of whoever runs the command line (where `--by` is only a claim),
    /// recorded with every event this service writes and with a decision that waits; an approval
    /// from the login that made the decision is refused like one's own. Nil for the pages (their
    /// session proves the name) and the job.
    public var osLogin: String?

    /// A service on one connection; use it from one task at a time, like the connection. The
    /// threshold and the judgement have no default on purpose: whoever builds a service says
    /// which hold (``ApprovalThreshold/none`` where none is configured; the settings' rules), so
    /// none is dropped by omission.
    public init(connection: Connection, approval: ApprovalThreshold, judgement: DecisionJudgement) {
        self.connection = connection
        self.approval = approval
        self.judgement = judgement
    }

    // MARK: Reading

    /// One page of the items matching `filter`, most severe first, then oldest first.
    /// A page beyond ``maximumPage`` is `ReviewError.invalidInput`.
    public func list(_ filter: ReviewFilter, page: Int = 1, limit: Int = 50) throws -> ReviewPage {
        let limit = min(max(limit, 1), Self.maximumPageSize)
        guard page <= Self.maximumPage else {
            throw ReviewError.invalidInput("a page number is at most \(Self.maximumPage)")
        }
        let page = max(page, 1)
        let values = filter.values()
        let total = try connection.query(SQL.count, values)[0].decode(Int.self, at: 0)
        var pageValues = values
        pageValues["severity_order"] = Self.severityOrder
        pageValues["limit"] = limit
        pageValues["offset"] = (page - 1) * limit
        let rows = try connection.query(SQL.page, pageValues)
        var counts: [String: Int] = [:]
        for row in try connection.query(SQL.countsByKind, filter.values(excludingKinds: true)) {
            counts[try row["kind"]] = try row["n"]
        }
        return ReviewPage(
            items: try rows.map(ReviewItem.init(row:)), total: total, page: page, limit: limit,
            countsByKind: FindingKind.allCases.map { ($0, counts[$0.rawValue] ?? 0) })
    }

    /// An item with its evidence, history and outbox row.
    public func detail(id: Int64) throws -> ReviewItemDetail {
        guard let row = try connection.queryFirst(SQL.detail, ["id": id]) else { throw ReviewError.notFound(id: id) }
        let events = try connection.query(SQL.events, ["id": id]).map(ReviewEvent.init(row:))
        let item = try ReviewItem(row: row)
        // What a decision would do, for an item still to decide (the page shows it and sends it back).
        var proposed: [Resolution: ActionDraft] = [:]
        for resolution in Resolution.allCases where resolution.action != nil
            && item.kind.allowedResolutions.contains(resolution) && [.open, .inReview].contains(item.status)
        {
            proposed[resolution] = try? actionDraft(for: item, resolution: resolution)
        }
        return ReviewItemDetail(
            item: item, evidence: try row["evidence_text"], events: events, outbox: try outbox(itemID: id),
            consumptionAnswers: try item.transactionID.map {
                try ConsumptionAnswerRecord.find(transactionIDs: [$0], on: connection)
            } ?? [], proposedActions: proposed)
    }

    /// The item at the top of the working queue (open or in review, most severe, oldest) other
    /// than `id`: where a person goes next after deciding one.
    public func nextInQueue(after id: Int64) throws -> Int64? {
        try connection.queryFirst(SQL.nextInQueue, ["id": id, "severity_order": Self.severityOrder])?
            .decode(Int64.self, at: 0)
    }

    /// Writes the items matching `filter` as CSV, header first, streaming so any size fits.
    /// Fields go through `ReportWriter.csvField`, which defuses spreadsheet formulas.
    public func exportCSV(_ filter: ReviewFilter, write: (String) throws -> Void) throws {
        let header = [
            "id", "status", "kind", "severity", "transaction_id", "original_transaction_id", "user_id", "product_id",
            "suggested_action", "assignee", "resolution", "resolved_by", "resolved_at", "note", "created_at",
            "updated_at", "first_seen_run", "last_seen_run",
        ]
        try write(header.joined(separator: ",") + "\r\n")
        var values = filter.values()
        values["severity_order"] = Self.severityOrder
        // A cursor read a batch at a time (sql/review/export_open.sql says why), to the first empty batch.
        try connection.transaction {
            try connection.execute(SQL.exportOpen, values)
            var rows = try connection.query(SQL.exportFetch)
            while !rows.isEmpty {
                for row in rows { try write(Self.csvLine(try ReviewItem(row: row))) }
                rows = try connection.query(SQL.exportFetch)
            }
        }
    }

    private static func csvLine(_ item: ReviewItem) -> String {
        let fields: [String] = [
            String(item.id), item.status.rawValue, item.kind.rawValue, item.severity.rawValue, item.transactionID ?? "",
            item.originalTransactionID ?? "", item.userID ?? "", item.productID ?? "", item.suggestedAction.rawValue,
            item.assignee ?? "", item.resolution?.rawValue ?? "", item.resolvedBy ?? "",
            item.resolvedAt.map(TimeExpression.format) ?? "", item.note ?? "", TimeExpression.format(item.createdAt),
            TimeExpression.format(item.updatedAt), String(item.firstSeenRun), String(item.lastSeenRun),
        ]
        return fields.map(ReportWriter.csvField).joined(separator: ",") + "\r\n"
    }

    /// The latest nightly and ad-hoc runs, newest first; the desk's lookups, recorded as runs of
    /// kind `lookup` (migration 0008), are not among them.
    public func runs(limit: Int = 50) throws -> [RunSummary] {
        try connection.query(SQL.runs, ["limit": min(max(limit, 1), 1000)]).map(RunSummary.init(row:))
    }

    /// One run.
    public func run(id: Int64) throws -> RunSummary? {
        try connection.queryFirst(SQL.run, ["id": id]).map(RunSummary.init(row:))
    }

    // MARK: Transitions

    /// Claims an item for `person`: `open` → `in_review`. Claiming one's own claim again changes
    /// nothing; taking over someone else's claim needs `force` and is recorded as an event.
    public func claim(id: Int64, by person: String, force: Bool = false) throws -> TransitionOutcome {
        let person = try Self.validatedName(person)
        return try connection.transaction {
            let item = try lockedItem(id)
            switch item.status {
            case .open:
                _ = try recordEvent(item, by: person, to: .inReview, note: nil, details: ["assignee": person])
                let updated = try update(SQL.claim, ["id": id, "assignee": person])
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
                let updated = try update(SQL.takeOver, ["id": id, "assignee": person])
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
        let note = try Self.note(note, required: false)
        let decided = try decision { () throws -> Decided in
            var item = try lockedItem(id)
            try decider.admit?(item)
            let waitingAlready = item.status == .awaitingApproval && item.pending?.resolution == resolution
                && item.pending?.by == person
            let repeated = waitingAlready
                || (item.status == .resolved && item.resolution == resolution && item.resolvedBy == person)
            if let outcome = try undecided(item, unless: repeated, {
                TransitionOutcome(
                    item: item, changed: false, outbox: try outbox(itemID: id),
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
            let draft = try actionDraft(for: item, resolution: resolution)
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
                    SQL.awaitApproval,
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
                SQL.resolve, ["id": id, "resolution": resolution.rawValue, "person": person, "note": note])
            let entry = try enqueue(draft, item: item, event: event, decidedBy: person, note: note)
            Failpoint.pass("review.decide")
            var message = "resolved item \(id) as \(resolution.rawValue)"
            if let entry { message += "; queued \(Self.describe(entry)) for the app" }
            return .done(TransitionOutcome(item: updated, changed: true, outbox: entry, message: message))
        }
        return try decided.outcome(id: id)
    }

    /// What a decision's transaction ended with: taken (or repeated), or the item's finding gone
    /// (the item auto-resolved, committed, and the decider told by throwing after the commit).
    private enum Decided {
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
    private func judged(
        _ item: ReviewItem, by person: String, deciding resolution: Resolution, run: Int64?
    ) throws -> DecisionJudgement.Verdict {
        let verdict = try judgement.judge(item, on: connection)
        if case .gone(let now) = verdict {
            _ = try recordEvent(
                item, by: Self.jobActor, to: .autoResolved,
                note: "condition no longer detected when judged again for \(person)'s decision "
                    + "(\(resolution.rawValue)): \(now)",
                details: ["resolution": resolution.rawValue, "decided_by": person], run: run)
            _ = try update(SQL.autoResolveStale, ["id": item.id])
        }
        return verdict
    }

    private static func held(_ item: ReviewItem) -> ReviewError {
        .notJudgedNow(
            id: item.id, reason: "an upload of its transaction or account is still being verified, so the rules "
                + "cannot say now whether the finding holds; decide it after the next run")
    }

    /// Refuses a resolution the item's kind does not allow (SPEC section 6: `granted` on a
    /// `duplicate_delivery`), saying which it allows.
    private static func allow(_ resolution: Resolution, on item: ReviewItem) throws {
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
        let person = try Self.validatedName(person)
        let note = try Self.note(note, required: false)
        let decided = try connection.transaction { () throws -> Decided in
            var item = try lockedItem(id)
            switch item.status {
            case .awaitingApproval:
                guard let pending = item.pending else { throw ReviewError.notAwaitingApproval(id: id, status: item.status) }
                try Self.check(seen, against: pending, id: id)
                guard !Self.samePerson(pending.by, person) else { throw ReviewError.ownDecision(id: id, by: pending.by) }
                // On the command line the name is only a claim: the login that decided cannot approve.
                if let osLogin, let row = try connection.queryFirst(SQL.pendingOSLogin, ["id": id]),
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
                    draft = try actionDraft(for: item, resolution: pending.resolution)
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
                let updated = try update(SQL.approve, ["id": id, "person": person])
                let entry = try enqueue(draft, item: item, event: event, decidedBy: pending.by, note: pending.note)
                Failpoint.pass("review.decide")
                var message = "approved \(pending.by)'s decision: resolved item \(id) as \(pending.resolution.rawValue)"
                if let entry { message += "; queued \(Self.describe(entry)) for the app" }
                return .done(TransitionOutcome(item: updated, changed: true, outbox: entry, message: message))
            case .resolved where item.approvedBy == person:
                return .done(TransitionOutcome(
                    item: item, changed: false, outbox: try outbox(itemID: id),
                    message: "item \(id) is already approved by \(person); nothing to do"))
            case .open, .inReview, .resolved, .dismissed:
                throw ReviewError.notAwaitingApproval(id: id, status: item.status)
            case .autoResolved:
                throw ReviewError.autoResolved(id: id)
            }
        }
        return try decided.outcome(id: id)
    }

    /// What the decision waiting on item `id` would make the app do, as its decider was shown it.
    private func pendingAction(_ id: Int64) throws -> ActionDraft? {
        guard let text: String = try connection.queryFirst(SQL.pendingAction, ["id": id])?["pending_action"] else {
            return nil
        }
        return try JSONDecoder().decode(ActionDraft.self, from: Data(text.utf8))
    }

    /// An approval whose decision would now do something else than its decider was shown (`was`):
    /// nothing takes effect, and the item goes back to open for a person to decide anew.
    private func sendBack(
        _ item: ReviewItem, pending: PendingDecision, by person: String, was: ActionDraft?, now: String
    ) throws -> Decided {
        let was = was?.description ?? "unknown (decided before this release kept it)"
        _ = try recordEvent(
            item, by: person, to: .open,
            note: "approval refused: what the decision would make the app do changed since it was decided; "
                + "was \(was), now \(now)",
            details: ["rejected_resolution": pending.resolution.rawValue, "decided_by": pending.by, "was": was,
                      "now": now])
        _ = try update(SQL.reject, ["id": item.id])
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
        let person = try Self.validatedName(person)
        let note = try Self.note(note, required: true)
        return try connection.transaction {
            let item = try lockedItem(id)
            switch item.status {
            case .awaitingApproval:
                guard let pending = item.pending else { throw ReviewError.notAwaitingApproval(id: id, status: item.status) }
                try Self.check(seen, against: pending, id: id)
                _ = try recordEvent(
                    item, by: person, to: .open, note: note,
                    details: ["rejected_resolution": pending.resolution.rawValue, "decided_by": pending.by])
                let updated = try update(SQL.reject, ["id": id])
                return TransitionOutcome(
                    item: updated, changed: true, outbox: nil,
                    message: "rejected \(pending.by)'s decision (\(pending.resolution.rawValue)) on item \(id); it is open again")
            case .open:
                let last = try connection.query(SQL.events, ["id": id]).last.map(ReviewEvent.init(row:))
                guard let last, last.fromStatus == ReviewStatus.awaitingApproval.rawValue, last.actor == person else {
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
        let note = try Self.note(note, required: true)
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
            let updated = try update(SQL.dismiss, ["id": id, "person": person, "note": note])
            Failpoint.pass("review.decide")
            return TransitionOutcome(item: updated, changed: true, outbox: nil, message: "dismissed item \(id)")
        }
    }

    // MARK: Plumbing

    /// Runs a decision's work in a transaction of its own or, inside the caller's (a bulk
    /// decision's hundred items, judged again together: ``BulkDecision/run(_:note:only:on:confirming:progress:)``),
    /// as part of it. A refusal there leaves at most the item's refresh from its finding as
    /// judged now, which is what the next run would write.
    private func decision<T>(_ body: () throws -> T) throws -> T {
        connection.isInTransaction ? try body() : try connection.transaction(body)
    }

    /// Refuses an approval or rejection from a page that showed another decision than `pending`.
    private static func check(_ seen: SeenDecision?, against pending: PendingDecision, id: Int64) throws {
        guard let seen, !seen.matches(pending) else { return }
        throw ReviewError.decisionChanged(id: id, resolution: pending.resolution, by: pending.by)
    }

    /// The severities most urgent first: lists sort by it, an unknown severity after them.
    private static let severityOrder = Severity.known.map(\.rawValue)

    private func lockedItem(_ id: Int64) throws -> ReviewItem {
        guard let row = try connection.queryFirst(SQL.lockItem, ["id": id]) else { throw ReviewError.notFound(id: id) }
        return try ReviewItem(row: row)
    }

    /// Runs one of the item's updates (each returns the row) and reads the item it leaves.
    private func update(_ file: SQLFile, _ values: SQLValues) throws -> ReviewItem {
        try ReviewItem(row: connection.query(file, values)[0])
    }

    /// Appends the event of a transition and returns its id.
    private func recordEvent(
        _ item: ReviewItem, by person: String, to status: ReviewStatus, note: String?, details: [String: String],
        run: Int64? = nil
    ) throws -> Int64 {
        try connection.query(
            SQL.recordEvent,
            ["item_id": item.id, "actor": person, "from_status": item.status.rawValue, "to_status": status.rawValue,
             "note": note, "details": details.isEmpty ? nil : try PostgresJSON(encoding: details), "run_id": run,
             "os_login": osLogin]
        )[0].decode(Int64.self, at: 0)
    }

    /// The event details of a resolution: the resolution, and the action it makes the app take.
    private static func details(_ resolution: Resolution, _ draft: ActionDraft?) -> [String: String] {
        var details: [String: String] = ["resolution": resolution.rawValue]
        if let draft {
            details["action"] = draft.action.rawValue
            details["from_user_id"] = draft.fromUserID
            details["to_user_id"] = draft.toUserID
        }
        return details
    }

    /// Writes the outbox row of a decision that took effect, if it makes the app act.
    private func enqueue(
        _ draft: ActionDraft?, item: ReviewItem, event: Int64, decidedBy: String, note: String?
    ) throws -> OutboxEntry? {
        guard let draft else { return nil }
        return try connection.queryFirst(
            SQL.enqueueAction,
            ["item_id": item.id, "event_id": event, "action": draft.action.rawValue, "transaction_id": item.transactionID,
             "product_id": draft.productID, "quantity": draft.quantity, "from_user_id": draft.fromUserID,
             "to_user_id": draft.toUserID, "decided_by": decidedBy, "note": note]
        ).map(OutboxEntry.init(row:))
    }

    private func outbox(itemID: Int64) throws -> OutboxEntry? {
        try connection.queryFirst(SQL.outboxOfItem, ["item_id": itemID]).map(OutboxEntry.init(row:))
    }

    /// What the app must do for a resolution, from the item's finding: the action, Apple's or the
    /// delivered product, the units, and the accounts it takes from and gives to. A page shows it
    /// before a person decides and sends it back with the decision; a decision waiting for
    /// approval keeps it, so the approval takes effect exactly so.
    public struct ActionDraft: Sendable, Equatable, Codable, CustomStringConvertible {
        public var action: OutboxAction
        public var productID: String?
        public var quantity: Int?
        public var fromUserID: String?
        public var toUserID: String?

        public init(action: OutboxAction, productID: String?, quantity: Int?, fromUserID: String?, toUserID: String?) {
            self.action = action
            self.productID = productID
            self.quantity = quantity
            self.fromUserID = fromUserID
            self.toUserID = toUserID
        }

        enum CodingKeys: String, CodingKey {
            case action
            case productID = "product_id"
            case quantity
            case fromUserID = "from_user_id"
            case toUserID = "to_user_id"
        }

        /// `grant coin42 ×1 to u1`, as ``ReviewService/describe(_:)`` says an outbox row.
        public var description: String {
            var text = "\(action.rawValue) \(productID ?? "?") ×\(quantity ?? 1)"
            if let fromUserID { text += " from \(fromUserID)" }
            if let toUserID { text += " to \(toUserID)" }
            return text
        }
    }

    /// Granted gives Apple's product to the buyer; revoked takes the delivered goods from the
    /// delivery's account; moved does both. Refused when the evidence could not say who.
    private func actionDraft(for item: ReviewItem, resolution: Resolution) throws -> ActionDraft? {
        guard let action = resolution.action else { return nil }
        let row = try connection.query(SQL.actionAccounts, ["id": item.id])[0]
        let buyer: String? = try row["buyer"]
        let deliveryUser: String? = try row["delivery_user"]
        let appleProduct: String? = try row["apple_product"]
        switch action {
        case .grant:
            guard let buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: "the buyer is unknown (several accounts uploaded the transaction and nothing binds it); "
                        + "grant by hand and resolve as no_action with a note")
            }
            // A quantity_mismatch grants only the missing units: none when the app delivered enough.
            let quantity: Int = try row["apple_quantity"] ?? 1
            guard quantity > 0 else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: "nothing is missing: the delivery holds what Apple sold, or more; "
                        + "revoke the units over it, or resolve as no_action")
            }
            return ActionDraft(
                action: .grant, productID: appleProduct ?? item.productID, quantity: quantity, fromUserID: nil,
                toUserID: buyer)
        case .revoke:
            guard let deliveryUser else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution, reason: "the evidence holds no unrevoked delivery to take back")
            }
            // After a partial refund revoke_quantity holds only the refunded units (SPEC section 14),
            // after a quantity_mismatch only the units over Apple's quantity
            // (sql/diff/findings/*.sql).
            let quantity: Int? = try row["delivery_quantity"]
            try Self.requireUnits(quantity, item: item, resolution: resolution)
            return ActionDraft(
                action: .revoke, productID: try row["delivery_product"] ?? item.productID,
                quantity: quantity, fromUserID: deliveryUser, toUserID: nil)
        case .move:
            guard let deliveryUser, let buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: deliveryUser == nil
                        ? "the evidence holds no unrevoked delivery to move"
                        : "the buyer is unknown, so there is no account to move the goods to")
            }
            guard deliveryUser != buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution, reason: "the goods are already with the buyer \(buyer)")
            }
            let quantity: Int? = try row["delivery_quantity"]
            try Self.requireUnits(quantity, item: item, resolution: resolution)
            return ActionDraft(
                action: .move, productID: try row["delivery_product"] ?? item.productID,
                quantity: quantity, fromUserID: deliveryUser, toUserID: buyer)
        }
    }

    /// A revoke or move of no units is refused: a quantity_mismatch whose app delivered less than
    /// Apple sold has nothing over Apple's quantity to take back.
    private static func requireUnits(_ quantity: Int?, item: ReviewItem, resolution: Resolution) throws {
        guard quantity == 0 else { return }
        throw ReviewError.actionNotApplicable(
            id: item.id, resolution: resolution,
            reason: "nothing was delivered beyond Apple's quantity; grant the missing units, or resolve as no_action")
    }

    /// The guard of every decision: nil when the item is open or in review (decide it); the
    /// `again` outcome when the same decision by the same person already took effect (nothing
    /// is written again); otherwise the refusal (decided by someone or something else).
    private func undecided(
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

    private static func waiting(_ item: ReviewItem) -> ReviewError {
        .awaitingApproval(id: item.id, resolution: item.pending?.resolution, by: item.pending?.by)
    }

    /// Names compare as people read them: `Mei` approving `mei`'s decision is the same person.
    private static func samePerson(_ a: String, _ b: String) -> Bool {
        a.caseInsensitiveCompare(b) == .orderedSame
    }

    private static func decided(_ item: ReviewItem) -> ReviewError {
        .alreadyDecided(
            id: item.id, status: item.status, resolution: item.resolution, by: item.resolvedBy, at: item.resolvedAt)
    }

    /// A short description of an outbox row (`grant coin42 ×1 to u1`).
    public static func describe(_ entry: OutboxEntry) -> String {
        ActionDraft(
            action: entry.action, productID: entry.productID, quantity: entry.quantity, fromUserID: entry.fromUserID,
            toUserID: entry.toUserID
        ).description
    }

    /// The statements, in `sql/review/`.
    enum SQL {
        static let count: SQLFile = "review/count.sql"
        static let page: SQLFile = "review/page.sql"
        static let countsByKind: SQLFile = "review/counts_by_kind.sql"
        static let exportOpen: SQLFile = "review/export_open.sql"
        static let exportFetch: SQLFile = "review/export_fetch.sql"
        static let detail: SQLFile = "review/detail.sql"
        static let events: SQLFile = "review/events.sql"
        static let nextInQueue: SQLFile = "review/next_in_queue.sql"
        static let runs: SQLFile = "review/runs.sql"
        static let run: SQLFile = "review/run.sql"
        static let lockItem: SQLFile = "review/lock_item.sql"
        static let claim: SQLFile = "review/claim.sql"
        static let takeOver: SQLFile = "review/take_over.sql"
        static let resolve: SQLFile = "review/resolve.sql"
        static let awaitApproval: SQLFile = "review/await_approval.sql"
        static let approve: SQLFile = "review/approve.sql"
        static let reject: SQLFile = "review/reject.sql"
        static let dismiss: SQLFile = "review/dismiss.sql"
        static let recordEvent: SQLFile = "review/record_event.sql"
        static let enqueueAction: SQLFile = "review/enqueue_action.sql"
        static let outboxOfItem: SQLFile = "review/outbox_of_item.sql"
        static let actionAccounts: SQLFile = "review/action_accounts.sql"
        static let bulkCandidates: SQLFile = "review/bulk_candidates.sql"
        static let bulkSummary: SQLFile = "review/bulk_summary.sql"
        static let rejudged: SQLFile = "review/rejudged.sql"
        static let autoResolveStale: SQLFile = "review/auto_resolve_stale.sql"
        static let pendingAction: SQLFile = "review/pending_action.sql"
        static let pendingOSLogin: SQLFile = "review/pending_os_login.sql"
    }

    /// The actor the job itself records (a run's items and auto-resolutions, the desk's lookups);
    /// no person may take it.
    public static let jobActor = "reconcile"
    /// The actor the notification receiver records (its passes' auto-resolutions); no person may
    /// take it.
    public static let receiverActor = "receiver"
    /// Every name the product acts under, which no person may take (``validatedName(_:)``): the
    /// job's and the receiver's, and every name starting with a policy's prefix
    /// (``PolicyRule/actorPrefix``: `policy:<rule>`). Compared without regard to case, accents or
    /// character width (`Receiver`, `ＲＥＣＯＮＣＩＬＥ`, `Policy：x`), after trimming.
    public static let reservedNames = [jobActor, receiverActor]
    public static let reservedPrefixes = [PolicyRule.actorPrefix]

    /// The reserved name or prefix that `name` (trimmed) is, or starts with; nil for a person's name.
    public static func reservation(of name: String) -> String? {
        func folded(_ text: String) -> String {
            text.trimmingCharacters(in: .whitespacesAndNewlines)
                .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        }
        let name = folded(name)
        return reservedNames.first { folded($0) == name } ?? reservedPrefixes.first { name.hasPrefix(folded($0)) }
    }

    /// A trimmed, non-empty actor name, or `ReviewError.invalidInput`: at most
    /// ``maximumNameLength`` Unicode scalars (a cluster of combining marks counts for each of
    /// them), no control or format characters (bidi overrides and isolates, zero-width joiners,
    /// U+0600 prefixes: a name must read as what it is), and none the product acts under
    /// (``reservedNames``, ``reservedPrefixes``).
    public static func validatedName(_ raw: String) throws -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw ReviewError.invalidInput("a name is required (who is deciding?)") }
        guard name.unicodeScalars.count <= maximumNameLength else {
            throw ReviewError.invalidInput("a name is at most \(maximumNameLength) characters")
        }
        guard !name.unicodeScalars.contains(where: {
            let category = $0.properties.generalCategory
            return category == .control || category == .format || category == .lineSeparator
                || category == .paragraphSeparator
        }) else {
            throw ReviewError.invalidInput("a name cannot hold control or invisible formatting characters")
        }
        switch reservation(of: name) {
        case nil: return name
        case let prefix? where reservedPrefixes.contains(prefix):
            throw ReviewError.invalidInput("names starting with \(prefix) are the policies'; use your own name")
        case let reserved?:
            throw ReviewError.invalidInput("\(reserved) is the product's own name (\(reservedNames.joined(separator: ", ")) "
                + "and \(reservedPrefixes.map { $0 + "…" }.joined(separator: ", ")) are reserved); use your own name")
        }
    }

    /// Who decides: a person by a validated name, or a policy rule (SPEC section 17) recorded as
    /// `policy:<name>` with the run whose pass decided, which checks the locked item before
    /// anything is written and throws to leave it as it is (claimed, over a limit).
    struct Decider {
        /// The actor recorded (`resolved_by`, the event, the outbox's `decided_by`).
        let name: String
        /// The run recorded with the event; nil for a person.
        var runID: Int64? = nil
        /// Runs on the locked item inside the decision's transaction; nil for a person.
        var admit: ((ReviewItem) throws -> Void)? = nil

        static func person(_ name: String) throws -> Decider { Decider(name: try ReviewService.validatedName(name)) }
    }

    static func note(_ raw: String?, required: Bool) throws -> String? {
        let note = raw?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let note, !note.isEmpty else {
            if required { throw ReviewError.invalidInput("a note is required: say why") }
            return nil
        }
        guard note.unicodeScalars.count <= maximumNoteLength else {
            throw ReviewError.invalidInput("a note is at most \(maximumNoteLength) characters")
        }
        return note
    }
}
