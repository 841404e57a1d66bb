import Foundation
import Hummingbird
import Reconciliation

/// Deciding many items from the queue page (SPEC section 17): the items a person ticked, or
/// everything the queue's filter matches, shown on a confirmation page with their count, their
/// value per currency and the first of them; then one POST (with its CSRF token, the count the
/// person confirmed and the digest of the items they were shown, `BulkDecision.digest`) decides
/// each as a single decision would, through `BulkDecision`, capped by `RECONCILE_BULK_LIMIT`. A
/// selection that changed between the two pages (other items, even as many) is shown again.
struct BulkController: Sendable {
    let database: ReviewDatabase
    let sessions: SessionStore
    let pages: Pages
    /// The most items one confirmation decides.
    let limit: Int
    /// Delivers decisions to the app's webhook after a batch; nil without a webhook.
    let outboxDelivery: OutboxDelivery?
    /// The job's settings, which resolve an Insights segment of the queue's filter; nil: a
    /// segment selects nothing.
    let settings: Settings?

    /// The selection's filter, an Insights segment resolved to its items when everything is
    /// selected (ticked items are those ticked, within whatever the page showed).
    func filter(_ selection: BulkSelection) async throws -> ReviewFilter? {
        guard var filter = selection.filter else { return nil }
        if selection.all, selection.query.segment != nil {
            filter = try await database.filter(selection.query, settings: settings)
        }
        return filter
    }

    /// How many items the confirmation page lists.
    static let shown = 10

    func routes() -> RouteCollection<SignedInContext> {
        let routes = RouteCollection(context: SignedInContext.self)
        routes.get("/bulk") { request, context in
            try await confirmation(BulkSelection(query: request.uri.query), context: context, status: .ok)
        }
        routes.post("/bulk") { request, context in
            let form = try await pages.checkedForm(request, context: context)
            return try await decide(BulkSelection(query: request.uri.query), form: form, context: context)
        }
        return routes
    }

    private func decide(_ selection: BulkSelection, form: Form, context: SignedInContext) async throws -> Response {
        let t = context.catalog
        let person = context.session.name
        let choice = form["decision"] ?? ""
        let decision: BulkDecision.Decision
        if choice == "dismiss" {
            decision = .dismiss
        } else if let resolution = Resolution(rawValue: choice) {
            decision = .resolve(resolution)
        } else {
            return try await confirmation(selection, context: context, status: .badRequest, error: t["error.choose_resolution"])
        }
        let note = form["note"]
        if let problem = ItemController.noteProblem(note, required: decision == .dismiss, t) {
            return try await confirmation(selection, context: context, status: .badRequest, error: problem)
        }
        guard let filter = try await filter(selection) else {
            return try await confirmation(selection, context: context, status: .badRequest)
        }
        let bulk = BulkDecision(filter: filter, person: person, limit: limit, approval: database.approval,
            judgement: database.judgement)
        let confirmed = form["count"].flatMap(Int.init)
        let seen = form["selection"]
        // The items the person saw must be the ones selected now: what they confirmed is what is
        // decided. The page always sends their digest; a POST without one (a client of the pages'
        // first form) is held to its count alone, as before.
        let outcome: BulkDecision.Outcome? = try await database.run(connection: { connection in
            let preview = try bulk.preview(on: connection, first: 0)
            guard preview.items == confirmed, preview.items <= bulk.limit else { return nil }
            do {
                return try bulk.run(decision, note: note, on: connection, confirming: seen)
            } catch is BulkDecision.SelectionChanged {
                return nil
            }
        })
        guard let outcome else {
            return try await confirmation(selection, context: context, status: .conflict, changed: true)
        }
        if outcome.decided > outcome.awaitingApproval { outboxDelivery?.trigger() }
        var text = t.text("flash.bulk_done", ["count": String(outcome.decided), "name": person])
        if outcome.awaitingApproval > 0 {
            text += " " + t.text("flash.bulk_waiting", ["count": String(outcome.awaitingApproval)])
        }
        if !outcome.skipped.isEmpty {
            text += " " + t.text("flash.bulk_skipped", ["count": String(outcome.skipped.count)])
        }
        await sessions.setFlash(.init(text: text, isError: false), for: context.session.id)
        return pages.redirect("/?" + selection.query.encoded(replacing: ["page": nil]))
    }

    /// The confirmation page: what the selection takes now, and the decision's form when there is
    /// something to decide within the limit.
    private func confirmation(
        _ selection: BulkSelection, context: SignedInContext, status: HTTPResponse.Status, error: String? = nil,
        changed: Bool = false
    ) async throws -> Response {
        let reader = context.reader
        let t = reader.catalog
        var preview: BulkDecision.Preview?
        var digest = ""
        // The threshold the decisions will apply: this server's and the recorded one, the stricter.
        var approval = database.approval
        if let filter = try await filter(selection) {
            let bulk = BulkDecision(filter: filter, person: context.session.name, limit: limit, approval: database.approval,
                judgement: database.judgement)
            (preview, digest, approval) = try await database.run(connection: { connection in
                let approval = try ApprovalThreshold.recorded(on: connection).stricter(bulk.approval)
                let preview = try bulk.preview(on: connection, first: Self.shown)
                guard preview.items > 0, preview.items <= bulk.limit else { return (preview, "", approval) }
                return (preview, try bulk.digest(on: connection), approval)
            })
        }
        let count = preview?.items ?? 0
        var notice = error
        if changed { notice = t.text("bulk.changed", ["count": String(count)]) }
        let tooMany = count > limit
        var values: [String] = (preview?.valueByCurrency ?? []).map {
            t.text("bulk.value_line", [
                "amount": reader.money(milli: $0.amountMilli, currency: $0.currency), "count": String($0.items),
            ])
        }
        if let unknown = preview?.unknownValue, unknown > 0 {
            values.append(t.text("bulk.unknown_value", ["count": String(unknown)]))
        }
        let rows: [BulkPage.Row] = (preview?.first ?? []).map { item in
            let value = item.amountMilli.map { reader.money(milli: $0, currency: item.currency ?? "") }
            return BulkPage.Row(
                id: item.id, href: "/items/\(item.id)", kindLabel: FindingKind(rawValue: item.kind).map(t.kind) ?? item.kind,
                transaction: item.transactionID ?? "—", user: item.userID ?? "—", product: item.productID ?? "—",
                value: value ?? "—")
        }
        // Only the resolutions every selected kind allows, and none chosen for the person unless
        // every kind suggests the same one: "granted" for a selection holding a duplicate would
        // queue nothing for it, and must not look like the obvious choice (issue 36 item 6).
        let kinds = preview?.byKind ?? []
        let suggested = Set(kinds.map(\.kind.suggestedAction)).count == 1
            ? Resolution.allCases.first { $0.action != nil && $0.action?.rawValue == kinds.first?.kind.suggestedAction.rawValue }
            : nil
        var options = [OptionView(value: "", label: t["bulk.choose"], selected: suggested == nil)]
        options += (preview?.allowedResolutions ?? []).map {
            OptionView(value: $0.rawValue, label: t["resolution_option.\($0.rawValue)"], selected: $0 == suggested)
        }
        options.append(OptionView(value: "dismiss", label: t["bulk.dismiss_option"], selected: false))
        let kindLines = kinds.map { t.text("bulk.kind_line", ["kind": t.kind($0.kind), "count": String($0.items)]) }
        let view = BulkPage(
            csrf: context.session.csrfToken, selection: digest, action: "/bulk?" + selection.encoded,
            backHref: "/?" + selection.query.encoded(replacing: ["page": nil]), count: count,
            countText: t.text("bulk.count", ["count": String(count)]), kinds: kindLines, values: values,
            firstText: t.text("bulk.first", ["count": String(rows.count)]), items: rows,
            canDecide: count > 0 && !tooMany, none: count == 0 ? t["bulk.none"] : nil,
            tooMany: tooMany ? t.text("bulk.too_many", ["count": String(count), "limit": String(limit)]) : nil,
            approval: approval.isEnabled ? t.text("bulk.approval", ["threshold": Self.text(approval, reader)]) : nil,
            submitText: t.text("bulk.submit", ["count": String(count)]), options: options)
        return pages.render(
            "bulk", view, title: t["bulk.title"], context: context, status: status,
            flash: notice.map { FlashView(text: $0, isError: true) }, tab: .queue)
    }

    /// The threshold in the reader's money format (`¥648.00, US$99.00`).
    private static func text(_ approval: ApprovalThreshold, _ reader: Reader) -> String {
        approval.milliByCurrency.sorted { $0.key < $1.key }
            .map { reader.money(milli: $0.value, currency: $0.key) }.joined(separator: ", ")
    }
}

/// What the queue page asks to decide: the ticked items (`id`, repeated) within the queue's
/// filter, or everything the filter matches (`all=1`). Nothing ticked is nothing selected, never
/// everything.
struct BulkSelection {
    let query: QueryFilter
    let ids: [Int64]
    let all: Bool

    init(query: String?) {
        let form = Form(query ?? "")
        self.query = QueryFilter(query: query)
        // A page shows at most ReviewQueue.maximumPageSize items to tick.
        ids = Array(form.values("id").compactMap { Int64($0) }.prefix(ReviewQueue.maximumPageSize))
        all = form["all"] == "1"
    }

    /// The service filter; nil when nothing is selected.
    var filter: ReviewFilter? {
        var filter = query.filter
        if all { return filter }
        guard !ids.isEmpty else { return nil }
        filter.ids = ids
        return filter
    }

    /// The query string that selects the same again.
    var encoded: String {
        let selected = all ? [("all", "1")] : ids.map { ("id", String($0)) }
        return [query.encoded(replacing: ["page": nil]), Form.encode(selected)].filter { !$0.isEmpty }
            .joined(separator: "&")
    }
}
