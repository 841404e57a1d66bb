import Foundation
import Hummingbird
import Logging
import Mustache
import NIOCore
import Reconciliation

/// What every page is rendered from: the reader's language and time zone, the request's path and
/// query (for the language links and the time zone form), and the session when there is one (for
/// the header).
protocol ReviewContext: RequestContext {
    var reader: Reader { get }
    var path: String { get }
    var query: String? { get }
    /// The logged-in session; nil only on the public routes (login, stylesheet, login links).
    var signedIn: SessionStore.Session? { get }
}

extension ReviewContext {
    var catalog: Catalog { reader.catalog }
}

/// The request context of the review pages: the logged-in session, once `SessionMiddleware` found
/// it, and the reader's language and time zone, once `PreferencesMiddleware` settled them. The
/// public routes use it; every other route is in the group of `SignedInContext`.
public struct ReviewRequestContext: ReviewContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The session of the request's cookie, if it names a live one.
    var session: SessionStore.Session?
    /// The language and time zone the page is written for.
    var reader: Reader = .standard
    /// The request's method, path and query, for the language links, the time zone form, and the
    /// way back after logging in.
    var method: HTTPRequest.Method = .get
    var path = "/"
    var query: String?
    /// The peer, for the login back-off and the refusal log, and the connection, closed by
    /// `RequestBodyMiddleware` when a body is not sent in time.
    let connection: RequestConnection

    /// Creates the context of a new request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = RequestConnection(source)
    }

    var signedIn: SessionStore.Session? { session }
}

/// The context of every route behind the login: `ReviewRequestContext` with the session certain.
/// The signed-in routes are a route group of this context (hummingbird's `ChildRequestContext`),
/// so their handlers cannot be reached without a session: the conversion fails with
/// `SignInRequired`, which sends the browser to the login page.
struct SignedInContext: ChildRequestContext, ReviewContext {
    var coreContext: CoreRequestContextStorage
    let session: SessionStore.Session
    let reader: Reader
    let path: String
    let query: String?
    let clientAddress: String

    init(context: ReviewRequestContext) throws {
        guard let session = context.session else { throw SignInRequired(context) }
        coreContext = context.coreContext
        self.session = session
        reader = context.reader
        path = context.path
        query = context.query
        clientAddress = context.connection.clientAddress
    }

    var signedIn: SessionStore.Session? { session }
}

/// A signed-in route asked for without a session: a redirect to the login page, which comes back
/// to the page asked for (a GET's path and query; the queue after a POST).
struct SignInRequired: Error {
    let location: String

    init(_ context: ReviewRequestContext) {
        var wanted = "/"
        if context.method == .get {
            wanted = context.path + (context.query.map { "?" + $0 } ?? "")
        }
        let next = wanted.addingPercentEncoding(withAllowedCharacters: Form.unreserved.union(.init(charactersIn: "/"))) ?? "/"
        location = "/login?next=" + next
    }

    var response: Response { Response(status: .seeOther, headers: [.location: location]) }
}

/// Builds the review web application (SPEC section 8): the seam `reconcile serve` runs and tests call.
public func buildApplication(configuration: ReviewWebConfiguration) throws -> some ApplicationProtocol {
    try ReviewWebConfiguration.checkTokenStrength(configuration.token)
    let site = try ReviewSite(configuration: configuration)
    let router = Router(context: ReviewRequestContext.self)
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: ErrorPagesMiddleware(library: site.pages.library))
    router.add(middleware: RequestBodyMiddleware(
        timeLimit: .milliseconds(Int64(configuration.requestBodyTimeout * 1000))))
    router.add(middleware: SessionMiddleware(sessions: site.sessions))
    router.add(middleware: PreferencesMiddleware(sessions: site.sessions))
    // Again inside, where the reader's language is known: the outer one answers what the session
    // and preference middleware themselves throw, in English; this one every page's errors.
    router.add(middleware: ErrorPagesMiddleware(library: site.pages.library))
    site.addRoutes(to: router)
    // The idle timeout also bounds reading a request head: the clock restarts only when a whole
    // head (or body part) has arrived, so a client trickling its headers is cut off too.
    let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeout * 1000))
    // Idle connections beyond the cap give way to new ones: they cannot use up the descriptors.
    let cap = ConnectionCap(limit: configuration.maximumClientConnections)
    return Application(
        router: router,
        server: .http1(configuration: .init(
            additionalChannelHandlers: [cap.handler(), CloseAfterAnswerHandler()], idleTimeout: idle)),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
        services: site.outboxDelivery.map { [OutboxDeliveryService(delivery: $0)] } ?? [],
        logger: configuration.logger)
}

/// Serves the review pages until SIGTERM or SIGINT, then shuts down gracefully.
public func runReviewServer(configuration: ReviewWebConfiguration) async throws {
    try await buildApplication(configuration: configuration).runService()
}

/// The pages and actions. Every queue change goes through `ReviewDecisions`, the CLI's code. The
/// routes live by area in `Routes/`, each a controller holding only what its routes use: session
/// (login, assets), queue, items, runs, and desk; `Pages` is what every one of them renders with.
struct ReviewSite: Sendable {
    static let cookieName = "reconcile_session"

    let sessions: SessionStore
    let pages: Pages
    let session: SessionController
    let queue: QueueController
    let items: ItemController
    let bulk: BulkController
    let runs: RunController
    let insights: InsightsController
    let desk: DeskController
    /// The outbox's delivery after decisions, nil without a webhook: run by the application as a
    /// service (``OutboxDeliveryService``).
    let outboxDelivery: OutboxDelivery?

    init(configuration: ReviewWebConfiguration) throws {
        sessions = SessionStore(
            idleLifetime: configuration.sessionIdleLifetime, absoluteLifetime: configuration.sessionAbsoluteLifetime,
            now: configuration.clock)
        let database = ReviewDatabase(
            url: configuration.databaseURL, maximumConnections: configuration.maximumConnections,
            waitTimeout: .milliseconds(Int64(configuration.connectionWaitTimeout * 1000)),
            statementTimeout: .milliseconds(Int64(configuration.statementTimeout * 1000)),
            approval: configuration.approval, judgement: configuration.judgement,
            maximumExports: configuration.maximumExportConnections)
        pages = Pages(library: try Templates.library())
        let outboxDelivery = configuration.outboxWebhook.map {
            OutboxDelivery(webhook: $0, databaseURL: configuration.databaseURL, logger: configuration.logger)
        }
        self.outboxDelivery = outboxDelivery
        session = SessionController(
            configuration: configuration, sessions: sessions, throttle: LoginThrottle(limits: configuration.loginLimits),
            pages: pages)
        queue = QueueController(database: database, sessions: sessions, pages: pages, configuration: configuration)
        items = ItemController(database: database, sessions: sessions, pages: pages, outboxDelivery: outboxDelivery)
        bulk = BulkController(
            database: database, sessions: sessions, pages: pages, limit: configuration.bulkLimit,
            outboxDelivery: outboxDelivery, settings: configuration.deskSettings)
        runs = RunController(database: database, sessions: sessions, pages: pages)
        insights = InsightsController(database: database, pages: pages, settings: configuration.deskSettings)
        desk = DeskController(database: database, sessions: sessions, pages: pages, configuration: configuration)
    }

    /// The public routes (login, login links, the stylesheet) on the router; every other route in
    /// the signed-in group.
    func addRoutes(to router: Router<ReviewRequestContext>) {
        router.addRoutes(session.publicRoutes())
        let signedIn = router.group(context: SignedInContext.self)
        signedIn.addRoutes(session.accountRoutes())
        signedIn.addRoutes(queue.routes())
        signedIn.addRoutes(items.routes())
        signedIn.addRoutes(bulk.routes())
        signedIn.addRoutes(runs.routes())
        signedIn.addRoutes(insights.routes())
        signedIn.addRoutes(desk.routes())
    }
}

/// What every controller renders and reads forms with: the templates, the page frame, error pages,
/// redirects, and the checks every POST passes.
struct Pages: Sendable {
    let library: MustacheLibrary

    // MARK: Rendering

    /// A page: the template's content inside the layout, with the header every page has (language
    /// switch, time zone, who is logged in) and the page's own view model under `page`.
    func render(
        _ template: String, _ page: Any, title: String, context: some ReviewContext,
        status: HTTPResponse.Status = .ok, flash: FlashView? = nil, tab: PageFrame.Tab? = nil
    ) -> Response {
        let frame = PageFrame(page: page, title: title, context: context, flash: flash, tab: tab)
        return Self.response(library: library, template: template, frame, status: status, logger: context.logger) {
            let t = context.catalog
            let failure = ErrorPage(heading: t["error.page_failed"], message: t["error.page_failed_detail"])
            return library.render(
                PageFrame(page: failure, title: failure.heading, context: context, flash: nil, tab: nil),
                withTemplate: "error")
                ?? "<!DOCTYPE html><meta charset=\"utf-8\"><title>\(HTMLText.escape(failure.heading))</title>"
                + "<h1>\(HTMLText.escape(failure.heading))</h1><p>\(HTMLText.escape(failure.message))</p>"
        }
    }

    /// A rendered template; a missing template is a bug in the build: it is logged and answered
    /// with a 500 and `failure`'s page, never with an empty 200.
    static func response(
        library: MustacheLibrary, template: String, _ object: Any, status: HTTPResponse.Status, logger: Logger,
        failure: () -> String
    ) -> Response {
        guard library.getTemplate(named: template) != nil, let html = library.render(object, withTemplate: template)
        else {
            logger.error("template missing", metadata: ["template.name": "\(template)"])
            return Response(
                status: .internalServerError, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: failure())))
        }
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    func errorPage(
        heading: String, message: String, context: some ReviewContext, status: HTTPResponse.Status
    ) -> Response {
        render("error", ErrorPage(heading: heading, message: message), title: heading, context: context, status: status)
    }

    func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    // MARK: Forms

    /// The form of a POST, after checking the request's origin and its CSRF token (403 otherwise).
    func checkedForm(_ request: Request, context: SignedInContext) async throws -> Form {
        try checkOrigin(request, context: context)
        let form = try await Form.read(request, context: context)
        guard constantTimeEquals(form["csrf_token"] ?? "", context.session.csrfToken) else {
            context.logger.notice("refused a POST without a valid CSRF token")
            throw HTTPError(.forbidden, message: context.catalog["error.form_expired"])
        }
        return form
    }

    /// A browser's POST names its origin; one from another site is refused before anything else.
    /// Behind a proxy the origin is the proxy's public host, which the proxy passes on as `Host`
    /// or `X-Forwarded-Host` (a cross-site form cannot set either on the victim's request).
    func checkOrigin(_ request: Request, context: some ReviewContext) throws {
        guard let origin = request.headers[.origin] else { return }
        guard let url = URL(string: origin), let originHost = url.host else {
            throw HTTPError(.forbidden, message: context.catalog["error.cross_site"])
        }
        let expected = originHost + (url.port.map { ":\($0)" } ?? "")
        let hosts = [request.head.authority, request.headers[.init("X-Forwarded-Host")!]].compactMap { $0 }
        guard hosts.contains(where: { $0.caseInsensitiveCompare(expected) == .orderedSame }) else {
            throw HTTPError(.forbidden, message: context.catalog["error.cross_site"])
        }
    }
}

/// Only a path on this site: no scheme, no `//host`, no backslash tricks.
func safeNext(_ next: String?) -> String {
    guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"),
        !next.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
    else { return "/" }
    return next
}
