import Foundation
import Hummingbird
import Reconciliation

/// One item: its evidence and history, and the decisions (claim, resolve, dismiss, and a second
/// person's approve or reject of a decision above `RECONCILE_APPROVAL_ABOVE`).
struct ItemController: Sendable {
    let database: ReviewDatabase
    let sessions: SessionStore
    let pages: Pages
    /// Delivers decisions to the app's webhook after each one; nil without a webhook.
    let outboxDelivery: OutboxDelivery?

    func routes() -> RouteCollection<SignedInContext> {
        let routes = RouteCollection(context: SignedInContext.self)
        routes.get("/items/:id") { _, context in
            try await itemPage(id: try itemID(context), context: context, status: .ok)
        }
        routes.post("/items/:id/claim") { request, context in
            let session = context.session
            let form = try await pages.checkedForm(request, context: context)
            let force = form["force"] == "1"
            return try await transition(id: try itemID(context), context: context) { decisions, id in
                try decisions.claim(id: id, by: session.name, force: force)
            }
        }
        routes.post("/items/:id/resolve") { request, context in
            let unchosen = context.catalog["error.choose_resolution"]
            let unreadable = context.catalog["error.http_400"]
            return try await decide(request, context: context, noteRequired: false) { decisions, id, person, note, form in
                guard let resolution = form["resolution"].flatMap(Resolution.init(rawValue:)) else {
                    throw HTTPError(.badRequest, message: unchosen)
                }
                // The action the page showed for this resolution (a script may send none).
                let seen = try form["shown_\(resolution.rawValue)"].map { shown in
                    guard let draft = try? JSONDecoder().decode(ActionDraft.self, from: Data(shown.utf8))
                    else { throw HTTPError(.badRequest, message: unreadable) }
                    return draft
                }
                return try decisions.resolve(id: id, resolution: resolution, by: person, note: note, seen: seen)
            }
        }
        routes.post("/items/:id/dismiss") { request, context in
            try await decide(request, context: context, noteRequired: true) { decisions, id, person, note, _ in
                try decisions.dismiss(id: id, by: person, note: note)
            }
        }
        routes.post("/items/:id/approve") { request, context in
            let unreadable = context.catalog["error.http_400"]
            return try await decide(request, context: context, noteRequired: false) { decisions, id, person, note, form in
                try decisions.approve(id: id, by: person, note: note, seen: try Self.seenDecision(form, unreadable))
            }
        }
        routes.post("/items/:id/reject") { request, context in
            let unreadable = context.catalog["error.http_400"]
            return try await decide(request, context: context, noteRequired: true) { decisions, id, person, note, form in
                try decisions.reject(id: id, by: person, note: note, seen: try Self.seenDecision(form, unreadable))
            }
        }
        return routes
    }

    /// A decision's POST: the form checked (origin, CSRF), its note held to ``ReviewNote``'s rule in
    /// the reader's words, then the transition by the session's person.
    private func decide(
        _ request: Request, context: SignedInContext, noteRequired: Bool,
        _ body: @escaping @Sendable (ReviewDecisions, Int64, _ person: String, _ note: String?, Form) throws
            -> TransitionOutcome
    ) async throws -> Response {
        let person = context.session.name
        let form = try await pages.checkedForm(request, context: context)
        let note = form["note"]
        let id = try itemID(context)
        if let problem = Self.noteProblem(note, required: noteRequired, context.catalog) {
            return try await itemPage(id: id, context: context, status: .badRequest, error: problem)
        }
        return try await transition(id: id, context: context) { decisions, id in try body(decisions, id, person, note, form) }
    }

    /// The pending decision the approve or reject form was shown (`pending_resolution`,
    /// `pending_at`; the page always sends both). Without them (a script posting only the token)
    /// the decision waiting now is acted on, as the CLI does; half of it, or one unreadable, is
    /// refused.
    static func seenDecision(_ form: Form, _ unreadable: String) throws -> SeenDecision? {
        let resolution = form["pending_resolution"], at = form["pending_at"]
        if resolution == nil, at == nil { return nil }
        guard let resolution = resolution.flatMap(Resolution.init(rawValue:)), let at = at.flatMap({ Int64($0) }) else {
            throw HTTPError(.badRequest, message: unreadable)
        }
        return SeenDecision(resolution: resolution, at: at)
    }

    private func itemID(_ context: SignedInContext) throws -> Int64 {
        guard let id = context.parameters.get("id", as: Int64.self) else {
            throw HTTPError(.notFound, message: context.catalog.text("error.item_not_found", ["id": "?"]))
        }
        return id
    }

    /// ``ReviewNote``'s rule, said in the reader's language before the decision is asked for.
    static func noteProblem(_ raw: String?, required: Bool, _ t: Catalog) -> String? {
        switch ReviewNote.problem(raw, required: required) {
        case .required: t["error.note_required"]
        case .tooLong: t.text("error.note_too_long", ["max": String(ReviewNote.maximumLength)])
        case nil: nil
        }
    }

    private func itemPage(
        id: Int64, context: SignedInContext, status: HTTPResponse.Status,
        error: String? = nil
    ) async throws -> Response {
        let session = context.session
        let t = context.catalog
        let detail: ReviewItemDetail
        let next: Int64?
        do {
            (detail, next) = try await database.read { queue in
                (try queue.detail(id: id), try queue.nextInQueue(after: id))
            }
        } catch ReviewError.notFound {
            return pages.errorPage(
                heading: t["error.not_found"], message: t.text("error.item_not_found", ["id": String(id)]),
                context: context, status: .notFound)
        }
        let flash = await sessions.takeFlash(for: session.id)
        let flashView = error.map { FlashView(text: $0, isError: true) } ?? flash.map { FlashView($0) }
        let page = ItemPageBuilder.page(
            detail, session: session, nextHref: next.map { "/items/\($0)" }, reader: context.reader)
        return pages.render(
            "item", page, title: t.text("item.title", ["id": String(id)]), context: context, status: status,
            flash: flashView, tab: .queue)
    }

    /// Runs a transition, then shows the item again: a redirect with a message on success (so a
    /// reload does not post twice), the item page with the refusal and 409 when it was illegal.
    private func transition(
        id: Int64, context: SignedInContext,
        _ body: @escaping @Sendable (ReviewDecisions, Int64) throws -> TransitionOutcome
    ) async throws -> Response {
        let session = context.session
        let t = context.catalog
        do {
            let outcome = try await database.decide { try body($0, id) }
            // A decision reaches the app's webhook at once, as the CLI's does, without holding up the page.
            if outcome.changed, outcome.item.status.isDecided { outboxDelivery?.trigger() }
            await sessions.setFlash(.init(text: Self.message(outcome, by: session.name, t), isError: false), for: session.id)
            return pages.redirect("/items/\(id)")
        } catch let error as ReviewError {
            switch error {
            case .notFound:
                return try await itemPage(id: id, context: context, status: .notFound)
            case .invalidInput:
                return try await itemPage(
                    id: id, context: context, status: .badRequest, error: Self.message(error, t))
            default:
                return try await itemPage(
                    id: id, context: context, status: .conflict, error: Self.message(error, t))
            }
        }
    }

    /// What a transition did, for the flash on the next page.
    static func message(_ outcome: TransitionOutcome, by person: String, _ t: Catalog) -> String {
        let item = outcome.item
        let values = [
            "id": String(item.id), "name": item.assignee ?? item.resolvedBy ?? person,
            "resolution": item.resolution.map(t.resolution) ?? "",
        ]
        switch item.status {
        case .inReview:
            return t.text(outcome.changed ? "flash.claimed" : "flash.already_claimed", values)
        case .awaitingApproval:
            let pending = [
                "id": String(item.id), "name": item.pending?.by ?? person,
                "resolution": item.pending.map { t.resolution($0.resolution) } ?? "",
            ]
            return t.text(outcome.changed ? "flash.awaiting_approval" : "flash.already_awaiting", pending)
        case .resolved where item.approvedBy == person:
            guard outcome.changed else { return t.text("flash.already_approved", values.merging(["name": person]) { $1 }) }
            guard let entry = outcome.outbox else { return t.text("flash.approved", values) }
            return t.text("flash.approved_queued", values.merging(["action": ItemPageBuilder.describe(entry, t)]) { $1 })
        case .resolved:
            guard outcome.changed else { return t.text("flash.already_resolved", values) }
            guard let entry = outcome.outbox else { return t.text("flash.resolved", values) }
            return t.text("flash.resolved_queued", values.merging(["action": ItemPageBuilder.describe(entry, t)]) { $1 })
        case .dismissed:
            return t.text(outcome.changed ? "flash.dismissed" : "flash.already_dismissed", values)
        case .open:
            // Only a rejection leaves an item open.
            return t.text(outcome.changed ? "flash.rejected" : "flash.already_rejected", values)
        case .autoResolved:
            return t.label("status", item.status.rawValue)
        }
    }

    /// Why the decision was refused, in the reader's words.
    static func message(_ error: ReviewError, _ t: Catalog) -> String {
        switch error {
        case .notFound(let id):
            return t.text("error.item_not_found", ["id": String(id)])
        case .claimedBySomeoneElse(let id, let assignee):
            return t.text("error.claimed_by_other", ["id": String(id), "name": assignee])
        case .alreadyDecided(let id, let status, let resolution, let by, _):
            let values = ["id": String(id), "name": by ?? "?", "resolution": resolution.map(t.resolution) ?? "?"]
            return t.text(status == .resolved ? "error.already_resolved" : "error.already_dismissed", values)
        case .autoResolved(let id):
            return t.text("error.auto_resolved", ["id": String(id)])
        case .actionNotApplicable(let id, let resolution, let reason):
            return t.text("error.not_applicable", ["id": String(id), "resolution": t.resolution(resolution), "reason": reason])
        case .invalidInput(let problem):
            return t.text("error.invalid_input", ["reason": problem])
        case .awaitingApproval(let id, let resolution, let by):
            return t.text("error.awaiting_approval", [
                "id": String(id), "name": by ?? "?", "resolution": resolution.map(t.resolution) ?? "?",
            ])
        case .ownDecision(let id, let by):
            return t.text("error.own_decision", ["id": String(id), "name": by])
        case .notAwaitingApproval(let id, _):
            return t.text("error.not_awaiting", ["id": String(id)])
        case .decisionChanged(let id, let resolution, let by):
            return t.text("error.decision_changed", ["id": String(id), "resolution": t.resolution(resolution), "name": by])
        case .findingGone(let id, let resolution, let now):
            return t.text("error.finding_gone", ["id": String(id), "resolution": t.resolution(resolution), "now": now])
        case .notJudgedNow(let id, let reason):
            return t.text("error.not_judged_now", ["id": String(id), "reason": reason])
        case .resolutionNotAllowed(let id, let kind, let resolution, let allowed):
            return t.text("error.resolution_not_allowed", [
                "id": String(id), "kind": t.kind(kind), "resolution": t.resolution(resolution),
                "allowed": allowed.map(t.resolution).joined(separator: t["common.list_separator"]),
            ])
        case .actionChanged(let id, let was, let now):
            return t.text("error.action_changed", ["id": String(id), "was": was, "now": now])
        case .approvalOutdated(let id, let was, let now):
            return t.text("error.approval_outdated", ["id": String(id), "was": was, "now": now])
        }
    }
}
