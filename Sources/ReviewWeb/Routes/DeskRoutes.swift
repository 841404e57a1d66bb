import Foundation
import Hummingbird
import Logging
import Mustache
import Reconciliation

/// The support desk's customer page (SPEC section 13, issue 15): what `reconcile lookup` shows,
/// found from the search box in every page's header (an order ID, a transaction id, a user id or
/// an app account token, recognised by `DeskQuery.recognising`), and the button that opens
/// review items for its findings.
struct DeskController: Sendable {
    let database: ReviewDatabase
    let sessions: SessionStore
    let pages: Pages
    let configuration: ReviewWebConfiguration

    func routes() -> RouteCollection<SignedInContext> {
        let routes = RouteCollection(context: SignedInContext.self)
        routes.get("/desk") { request, context in
            let text = request.uri.queryParameters.get("q") ?? ""
            let kind = request.uri.queryParameters.get("kind")
            guard let page = QueryFilter(query: request.uri.query).page else {
                throw HTTPError(
                    .badRequest,
                    message: context.catalog.text("error.page_too_large", ["max": String(ReviewQueue.maximumPage)]))
            }
            return try await deskPage(text, kind: kind, page: page, enqueue: false, context: context)
        }
        routes.post("/desk/enqueue") { request, context in
            let form = try await pages.checkedForm(request, context: context)
            let text = form["q"] ?? ""
            return try await deskPage(text, kind: form["kind"], page: 1, enqueue: true, context: context)
        }
        return routes
    }

    /// The customer page for what was typed; refusals (a malformed query, an order ID without
    /// credentials, Apple not answering) are said on the page. After an enqueue, a redirect to
    /// the page with a message, so a reload does not post twice.
    /// `kind` (`user`, `transaction`, `order`, `token`), when given, says what `text` is; else
    /// it is recognised from its shape. Links the pages make name it: a numeric account id is
    /// not a transaction id.
    private func deskPage(
        _ text: String, kind: String?, page: Int, enqueue: Bool, context: SignedInContext
    ) async throws -> Response {
        let session = context.session
        let t = context.catalog
        let title = t["desk.title"]
        func notice(_ message: String, status: HTTPResponse.Status) -> Response {
            pages.render(
                "desk", DeskPage(query: text, notice: message, csrf: session.csrfToken), title: title,
                context: context, status: status)
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return notice(t["desk.hint"], status: .ok)
        }
        let query: DeskQuery
        do {
            if let kind {
                guard let named = DeskQuery.Kind(rawValue: kind) else { throw DeskError.invalidQuery(kind) }
                query = try DeskQuery(named, text)
            } else {
                query = try DeskQuery.recognising(text)
            }
        } catch {
            return notice(t["desk.invalid_query"], status: .badRequest)
        }
        guard let settings = configuration.deskSettings else {
            return notice(t["desk.unavailable"], status: .serviceUnavailable)
        }
        let desk = DeskService(
            settings: settings, serverAPI: configuration.deskServerAPI, play: configuration.deskPlay, logger: context.logger)
        let picture: CustomerPicture
        let answers: [ConsumptionAnswerRecord]
        do {
            // No connection is held while Apple is asked: each database step borrows one.
            // The ledger rows, uploads and items of the page's transactions only: the order needs
            // every verdict, the cards only what they show.
            picture = try await desk.lookup(
                query, enqueue: enqueue, actor: .person(session.name), database: database.lender,
                appleTimeLimit: .milliseconds(Int64(configuration.deskAppleTimeLimit * 1000)),
                details: { DeskPageBuilder.shownIDs($0, page: page) })
            // What was answered to Apple about refunds of the purchases shown (SPEC section 14).
            let ids = DeskPageBuilder.shownIDs(picture.transactions, page: page)
            answers = try await database.lender.run { try ConsumptionAnswerRecord.find(transactionIDs: ids, on: $0) }
        } catch let error as DeskError {
            switch error {
            case .invalidQuery: return notice(t["desk.invalid_query"], status: .badRequest)
            case .orderNeedsServerAPI: return notice(t["desk.order_needs_api"], status: .ok)
            case .appleUnanswered: return notice(t["desk.apple_unanswered"], status: .serviceUnavailable)
            case .orderNeedsPlayAPI: return notice(t["desk.play_order_needs_api"], status: .ok)
            case .googleUnanswered: return notice(t["desk.google_unanswered"], status: .serviceUnavailable)
            }
        }
        if enqueue {
            context.logger.info("desk enqueued a customer's findings", metadata: [
                "desk.kind": "\(query.kind.rawValue)", "findings": "\(picture.findings.count)",
            ])
            await sessions.setFlash(
                .init(text: t.text("desk.enqueued", ["count": String(picture.findings.count)]), isError: false),
                for: session.id)
            return pages.redirect("/desk?" + Form.encode([("q", query.value), ("kind", query.kind.rawValue)]))
        }
        let flash = await sessions.takeFlash(for: session.id).map { FlashView($0) }
        return pages.render(
            "desk",
            DeskPageBuilder.page(
                picture, answers: answers, typed: text, page: page, csrf: session.csrfToken, reader: context.reader),
            title: title, context: context, flash: flash)
    }
}

/// `/desk?q=…&kind=user` for an account: the link from an item page to its customer's page
/// names the kind, so an account id shaped like a transaction id or an order ID stays an account.
func deskHref(user: String) -> String {
    "/desk?" + Form.encode([("q", user), ("kind", DeskQuery.Kind.user.rawValue)])
}
