import Foundation
import Hummingbird
import NIOCore
import Logging
import Mustache
import Reconciliation

/// The request context of the review pages: the logged-in session, once `SessionMiddleware` found it.
public struct ReviewRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The logged-in session; nil only on the public routes (login, stylesheet).
    var session: SessionStore.Session?
    /// The peer's IP address, for the login back-off and the refusal log ("unknown" without one).
    let clientAddress: String

    /// Creates the context of a new request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}

/// Builds the review web application (SPEC section 8): the seam `reconcile serve` runs and tests call.
public func buildApplication(configuration: ReviewWebConfiguration) throws -> some ApplicationProtocol {
    try ReviewWebConfiguration.checkTokenStrength(configuration.token)
    let site = try ReviewSite(configuration: configuration)
    let router = Router(context: ReviewRequestContext.self)
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: ErrorPagesMiddleware(library: site.library))
    router.add(middleware: SessionMiddleware(sessions: site.sessions))
    site.addRoutes(to: router)
    // The idle timeout also bounds reading a request head: the clock restarts only when a whole
    // head (or body part) has arrived, so a client trickling its headers is cut off too.
    let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeout * 1000))
    return Application(
        router: router,
        server: .http1(configuration: .init(idleTimeout: idle)),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
        logger: configuration.logger)
}

/// Serves the review pages until SIGTERM or SIGINT, then shuts down gracefully.
public func runReviewServer(configuration: ReviewWebConfiguration) async throws {
    try await buildApplication(configuration: configuration).runService()
}

/// The pages and actions. Every queue change goes through `ReviewService`, the CLI's code.
struct ReviewSite: Sendable {
    static let cookieName = "reconcile_session"

    let configuration: ReviewWebConfiguration
    let sessions: SessionStore
    let database: ReviewDatabase
    let library: MustacheLibrary
    let throttle: LoginThrottle

    init(configuration: ReviewWebConfiguration) throws {
        self.configuration = configuration
        sessions = SessionStore(
            idleLifetime: configuration.sessionIdleLifetime, absoluteLifetime: configuration.sessionAbsoluteLifetime)
        database = ReviewDatabase(
            url: configuration.databaseURL, maximumConnections: configuration.maximumConnections,
            waitTimeout: .milliseconds(Int64(configuration.connectionWaitTimeout * 1000)),
            statementTimeout: .milliseconds(Int64(configuration.statementTimeout * 1000)))
        library = try Templates.library()
        throttle = LoginThrottle(limits: configuration.loginLimits)
    }

    func addRoutes(to router: Router<ReviewRequestContext>) {
        router.get("/assets/app.css") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                body: .init(byteBuffer: ByteBuffer(string: Templates.css)))
        }
        router.get("/login") { request, _ in
            render("login", LoginPage(error: nil, next: safeNext(request.uri.queryParameters["next"].map(String.init)), name: ""))
        }
        router.post("/login") { request, context in try await login(request, context: context) }
        router.get("/login/ticket/:ticket") { _, context in try await redeemTicket(context: context) }
        router.post("/login-links") { request, context in try await createTicket(request, context: context) }
        router.post("/logout") { request, context in
            let session = try await checkedForm(request, context: context).session
            await sessions.remove(id: session.id)
            var response = redirect("/login")
            response.setCookie(sessionCookie(value: "", maxAge: 0))
            return response
        }
        router.get("/") { request, context in try await queue(request, context: context) }
        router.get("/export.csv") { request, context in try await export(request, context: context) }
        router.get("/items/:id") { _, context in
            let session = try context.requireSession()
            return try await itemPage(id: try itemID(context), session: session, status: .ok)
        }
        router.post("/items/:id/claim") { request, context in
            let (session, form) = try await checkedForm(request, context: context)
            let force = form["force"] == "1"
            return try await transition(id: try itemID(context), session: session) { service, id in
                try service.claim(id: id, by: session.name, force: force)
            }
        }
        router.post("/items/:id/resolve") { request, context in
            let (session, form) = try await checkedForm(request, context: context)
            guard let resolution = form["resolution"].flatMap(Resolution.init(rawValue:)) else {
                throw HTTPError(.badRequest, message: "Choose a resolution: granted, revoked, moved or no_action.")
            }
            let note = form["note"]
            return try await transition(id: try itemID(context), session: session) { service, id in
                try service.resolve(id: id, resolution: resolution, by: session.name, note: note)
            }
        }
        router.post("/items/:id/dismiss") { request, context in
            let (session, form) = try await checkedForm(request, context: context)
            let note = form["note"]
            return try await transition(id: try itemID(context), session: session) { service, id in
                try service.dismiss(id: id, by: session.name, note: note)
            }
        }
        router.get("/runs") { _, context in try await runsPage(context: context) }
        router.get("/runs/:id/report") { _, context in try await report(context: context) }
    }

    // MARK: Login

    private func login(_ request: Request, context: ReviewRequestContext) async throws -> Response {
        try checkOrigin(request)
        let form = try await Form.read(request, context: context)
        let next = safeNext(form["next"])
        let name = form["name"] ?? ""
        let client = context.clientAddress
        if let wait = await throttle.admit(client: client) {
            context.logger.notice(
                "login refused", metadata: ["login.reason": "backing off after wrong tokens", "client.address": "\(client)"])
            let seconds = Int(wait.rounded(.up))
            var response = render(
                "login",
                LoginPage(error: "Too many wrong tokens. Try again in \(seconds) seconds.", next: next, name: name),
                status: .tooManyRequests)
            response.headers[.retryAfter] = String(seconds)
            return response
        }
        guard constantTimeEquals(form["token"] ?? "", configuration.token.value) else {
            context.logger.notice("login refused", metadata: ["login.reason": "wrong token", "client.address": "\(client)"])
            return render("login", LoginPage(error: "That token is not right.", next: next, name: name), status: .unauthorized)
        }
        await throttle.recordSuccess(client: client)
        let person: String
        do {
            person = try ReviewService.validatedName(name)
        } catch {
            return render("login", LoginPage(error: "\(error)", next: next, name: name), status: .badRequest)
        }
        // A fresh session id on every login; the caller's previous session ends (no fixation).
        if let previous = request.cookies[Self.cookieName]?.value, !previous.isEmpty {
            await sessions.remove(id: previous)
        }
        let session = await sessions.create(name: person)
        context.logger.info("logged in", metadata: ["review.actor": "\(person)", "client.address": "\(client)"])
        var response = redirect(next)
        response.setCookie(sessionCookie(value: session.id, maxAge: Int(configuration.sessionIdleLifetime)))
        return response
    }

    /// A single-use link (valid 60 s) that logs another browser in as the same person, so a
    /// headless browser can be logged in without the token ever appearing in a URL or argv.
    private func createTicket(_ request: Request, context: ReviewRequestContext) async throws -> Response {
        let (session, form) = try await checkedForm(request, context: context)
        let ticket = await sessions.createTicket(name: session.name, next: safeNext(form["next"]))
        return Response(
            status: .created, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: "/login/ticket/\(ticket)\n")))
    }

    private func redeemTicket(context: ReviewRequestContext) async throws -> Response {
        let ticket = try context.parameters.require("ticket")
        guard let (session, next) = await sessions.redeem(ticket: ticket) else {
            return render(
                "login", LoginPage(error: "That login link has expired or was already used.", next: "/", name: ""),
                status: .unauthorized)
        }
        var response = redirect(next)
        response.setCookie(sessionCookie(value: session.id, maxAge: Int(configuration.sessionIdleLifetime)))
        return response
    }

    private func sessionCookie(value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: Self.cookieName, value: value, maxAge: maxAge, path: "/", secure: configuration.secureCookies,
            httpOnly: true, sameSite: .strict)
    }

    // MARK: Queue

    private func queue(_ request: Request, context: ReviewRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let query = QueryFilter(query: request.uri.query)
        let filter = query.filter
        guard let page = query.page else {
            throw HTTPError(.badRequest, message: "A page number is at most \(ReviewService.maximumPage).")
        }
        let result = try await database.run { try $0.list(filter, page: page, limit: 50) }
        let flash = await sessions.takeFlash(for: session.id)
        var sessionView = SessionView(session)
        sessionView.onQueue = true
        let selectedKind = filter.kinds.first?.rawValue
        let statusOptions = QueryFilter.statusChoices.map {
            OptionView(value: $0.value, label: $0.label, selected: $0.value == query.statusChoice)
        }
        let kindOptions = FindingKind.allCases.map {
            OptionView(value: $0.rawValue, label: Format.label($0.rawValue), selected: $0.rawValue == selectedKind)
        }
        let severityOptions = ReviewFilter.severityValues.map {
            OptionView(value: $0, label: Format.label($0), selected: filter.severities.first == $0)
        }
        let kindCounts = result.countsByKind.map { entry -> QueuePage.KindCount in
            let href = "/?" + query.encoded(replacing: ["kind": entry.kind.rawValue, "page": nil])
            return QueuePage.KindCount(
                label: Format.label(entry.kind.rawValue), severity: entry.kind.severity, count: entry.count,
                zero: entry.count == 0, active: entry.kind.rawValue == selectedKind, href: href)
        }
        let rows = result.items.map { item -> QueuePage.Row in
            QueuePage.Row(
                id: item.id, href: "/items/\(item.id)", severity: item.severity, kindLabel: Format.label(item.kind),
                status: item.status.rawValue, statusLabel: Format.label(item.status.rawValue),
                transaction: item.transactionID ?? "—", user: item.userID ?? "—", product: item.productID ?? "—",
                assignee: item.assignee ?? "", detected: Format.minute(item.createdAt))
        }
        let filterView = QueuePage.FilterView(
            user: filter.userID ?? "", product: filter.productID ?? "", transaction: filter.transactionID ?? "",
            since: query.value("since") ?? "", until: query.value("until") ?? "")
        let previous: String? = result.page > 1 ? "/?" + query.encoded(replacing: ["page": String(result.page - 1)]) : nil
        let next: String? =
            result.page < result.pageCount ? "/?" + query.encoded(replacing: ["page": String(result.page + 1)]) : nil
        let view = QueuePage(
            session: sessionView, flash: flash.map { FlashView(text: $0.text, isError: $0.isError) },
            filter: filterView, statusOptions: statusOptions, kindOptions: kindOptions,
            severityOptions: severityOptions, allKinds: filter.kinds.isEmpty,
            allKindsHref: "/?" + query.encoded(replacing: ["kind": nil, "page": nil]), kindCounts: kindCounts,
            items: rows, hasItems: !rows.isEmpty, total: result.total, page: result.page, pageCount: result.pageCount,
            prevHref: previous, nextHref: next, exportHref: "/export.csv?" + query.encoded(replacing: ["page": nil]))
        return render("queue", view)
    }

    private func export(_ request: Request, context: ReviewRequestContext) async throws -> Response {
        _ = try context.requireSession()
        let filter = QueryFilter(query: request.uri.query).filter
        let csv = try await database.run { service in
            var text = ""
            try service.exportCSV(filter) { text += $0 }
            return text
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"review-items.csv\"",
                .cacheControl: "no-store",
            ],
            body: .init(byteBuffer: ByteBuffer(string: csv)))
    }

    // MARK: Item

    private func itemID(_ context: ReviewRequestContext) throws -> Int64 {
        guard let id = context.parameters.get("id", as: Int64.self) else {
            throw HTTPError(.notFound, message: "No such review item.")
        }
        return id
    }

    private func itemPage(
        id: Int64, session: SessionStore.Session, status: HTTPResponse.Status, error: String? = nil
    ) async throws -> Response {
        let detail: ReviewItemDetail
        let next: Int64?
        do {
            (detail, next) = try await database.run { service in
                (try service.detail(id: id), try service.nextInQueue(after: id))
            }
        } catch ReviewError.notFound {
            return render(
                "error", ErrorPage(session: SessionView(session), heading: "Not found", message: "Review item \(id) does not exist."),
                status: .notFound)
        }
        let flash = await sessions.takeFlash(for: session.id)
        let flashView = error.map { FlashView(text: $0, isError: true) } ?? flash.map { FlashView(text: $0.text, isError: $0.isError) }
        return render(
            "item", ItemPageBuilder.page(detail, session: session, flash: flashView, nextHref: next.map { "/items/\($0)" }),
            status: status)
    }

    /// Runs a transition, then shows the item again: a redirect with a message on success (so a
    /// reload does not post twice), the item page with the refusal and 409 when it was illegal.
    private func transition(
        id: Int64, session: SessionStore.Session,
        _ body: @escaping @Sendable (ReviewService, Int64) throws -> TransitionOutcome
    ) async throws -> Response {
        do {
            let outcome = try await database.run { try body($0, id) }
            await sessions.setFlash(.init(text: outcome.message.prefix(1).uppercased() + outcome.message.dropFirst(), isError: false), for: session.id)
            return redirect("/items/\(id)")
        } catch let error as ReviewError {
            switch error {
            case .notFound:
                return try await itemPage(id: id, session: session, status: .notFound)
            case .invalidInput:
                return try await itemPage(id: id, session: session, status: .badRequest, error: "\(error)")
            default:
                return try await itemPage(id: id, session: session, status: .conflict, error: "\(error)")
            }
        }
    }

    // MARK: Runs

    private func runsPage(context: ReviewRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let runs = try await database.run { try $0.runs(limit: 100) }
        var sessionView = SessionView(session)
        sessionView.onRuns = true
        let flash = await sessions.takeFlash(for: session.id)
        return render("runs", RunsPage(
            session: sessionView, flash: flash.map { FlashView(text: $0.text, isError: $0.isError) },
            runs: runs.map { run in
                RunsPage.Run(
                    id: run.id, status: run.status, statusLabel: Format.label(run.status), dryRun: run.dryRun,
                    window: "\(run.since.map(Format.minute) ?? "beginning") → \(Format.minute(run.until))",
                    started: Format.minute(run.startedAt), uploads: run.uploads, findings: run.findingsTotal,
                    newFindings: run.findingsNew, reportHref: run.reportDirectory == nil ? nil : "/runs/\(run.id)/report")
            }, hasRuns: !runs.isEmpty))
    }

    /// A run's `report.html` as the job wrote it (only that file name, inside the run's own folder).
    private func report(context: ReviewRequestContext) async throws -> Response {
        let session = try context.requireSession()
        guard let id = context.parameters.get("id", as: Int64.self),
            let run = try await database.run({ try $0.run(id: id) }), let directory = run.reportDirectory
        else {
            return render(
                "error", ErrorPage(session: SessionView(session), heading: "No report", message: "This run has no report."),
                status: .notFound)
        }
        let file = URL(fileURLWithPath: directory).appendingPathComponent("report.html")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            return render(
                "error",
                ErrorPage(
                    session: SessionView(session), heading: "Report missing",
                    message: "Run \(id)'s report.html is not in its report folder on this machine."),
                status: .notFound)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8",
                // The report is self-contained: inline CSS and SVG only, nothing may load or run.
                .contentSecurityPolicy:
                    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; "
                    + "base-uri 'none'; form-action 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Plumbing

    /// The form of a POST, after checking the request's origin and its CSRF token (403 otherwise).
    private func checkedForm(
        _ request: Request, context: ReviewRequestContext
    ) async throws -> (session: SessionStore.Session, form: Form) {
        let session = try context.requireSession()
        try checkOrigin(request)
        let form = try await Form.read(request, context: context)
        guard constantTimeEquals(form["csrf_token"] ?? "", session.csrfToken) else {
            context.logger.notice("refused a POST without a valid CSRF token")
            throw HTTPError(.forbidden, message: "The form has expired or did not come from this site. Reload the page and try again.")
        }
        return (session, form)
    }

    /// A browser's POST names its origin; one from another site is refused before anything else.
    /// Behind a proxy the origin is the proxy's public host, which the proxy passes on as `Host`
    /// or `X-Forwarded-Host` (a cross-site form cannot set either on the victim's request).
    private func checkOrigin(_ request: Request) throws {
        guard let origin = request.headers[.origin] else { return }
        guard let url = URL(string: origin), let originHost = url.host else {
            throw HTTPError(.forbidden, message: "Cross-site form posts are refused.")
        }
        let expected = originHost + (url.port.map { ":\($0)" } ?? "")
        let hosts = [request.head.authority, request.headers[.init("X-Forwarded-Host")!]].compactMap { $0 }
        guard hosts.contains(where: { $0.caseInsensitiveCompare(expected) == .orderedSame }) else {
            throw HTTPError(.forbidden, message: "Cross-site form posts are refused.")
        }
    }

    func render(_ template: String, _ value: Any, status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(value, withTemplate: template) ?? "template \(template) is missing"
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }
}

/// Only a path on this site: no scheme, no `//host`, no backslash tricks.
func safeNext(_ next: String?) -> String {
    guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"),
        !next.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
    else { return "/" }
    return next
}

extension ReviewRequestContext {
    func requireSession() throws -> SessionStore.Session {
        guard let session else { throw HTTPError(.unauthorized) }
        return session
    }
}
